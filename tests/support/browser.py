"""Debian's chromium for real-browser tests, cut off from every network but the local one."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCREENSHOT_DIR = ROOT / "var" / "screenshots"

# No name resolves except localhost, and anything not on the loopback goes to a proxy that is not
# there: a page that needs a CDN or a font service renders without it, as in a locked-down network.
OFFLINE_FLAGS = [
    "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE localhost",
    "--proxy-server=http://127.0.0.1:9",
]
HEADLESS_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    # Chromium's own background traffic (updates, sync, QUIC probes) is refused on a closed
    # network, many connections at a time; turned off so the page under test is all it does.
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    *OFFLINE_FLAGS,
]


def _install(package: str) -> None:
    if shutil.which("apt-get") is None:
        pytest.skip(f"{package} is not installed and apt-get is unavailable to install it")
    subprocess.run(["apt-get", "install", "-y", "-q", package], check=True, capture_output=True, timeout=900)


def chromium() -> str:
    """The chromium binary, installed with apt-get on first use."""
    if shutil.which("chromium") is None:
        _install("chromium")
    path = shutil.which("chromium")
    assert path, "apt-get install chromium did not provide a chromium binary"
    return path


def chromedriver() -> str:
    if shutil.which("chromedriver") is None:
        _install("chromium-driver")
    path = shutil.which("chromedriver")
    assert path, "apt-get install chromium-driver did not provide chromedriver"
    return path


def dump_dom(url: str, *, budget_ms: int = 15000) -> str:
    """The page's DOM after its scripts ran (virtual time lets the page's fetches finish)."""
    command = [chromium(), *HEADLESS_FLAGS, f"--virtual-time-budget={budget_ms}", "--dump-dom", url]
    return subprocess.run(command, check=True, capture_output=True, text=True, timeout=120).stdout


def screenshot(url: str, name: str, *, budget_ms: int = 15000) -> Path:
    SCREENSHOT_DIR.mkdir(parents=True, exist_ok=True)
    path = SCREENSHOT_DIR / name
    command = [
        chromium(),
        *HEADLESS_FLAGS,
        f"--virtual-time-budget={budget_ms}",
        "--window-size=1280,1600",
        f"--screenshot={path}",
        url,
    ]
    subprocess.run(command, check=True, capture_output=True, timeout=120)
    return path


# One script reads the element and its text at once: between a separate find and read, an htmx
# swap can replace the element, and chromedriver then fails the read (a stale reference, or "Node
# with given id does not belong to the document", which selenium cannot ignore selectively).
_TEXT_OF = "const e = document.querySelector(arguments[0]); return e ? e.innerText : null;"


def text_of(driver, selector: str = "body") -> str | None:
    """The rendered text of the first element matching `selector`, or None when there is none."""
    return driver.execute_script(_TEXT_OF, selector)


def wait_for_text(driver, text: str, *, selector: str = "main", timeout: float = 20) -> None:
    """Wait until the element matching `selector` shows `text`."""
    from selenium.common.exceptions import TimeoutException
    from selenium.webdriver.support.ui import WebDriverWait

    try:
        WebDriverWait(driver, timeout).until(lambda d: text in (text_of(d, selector) or ""))
    except TimeoutException:
        raise AssertionError(f"{text!r} never appeared; the page shows: {text_of(driver)}") from None


def click(driver, by: str, selector: str, *, timeout: float = 20) -> None:
    """Click the element matching `selector`, found afresh until a click reaches it: a fragment
    that polls (the run page's task table, every second) replaces its elements, and one found just
    before a swap is stale by the time the click is sent."""
    from selenium.common.exceptions import StaleElementReferenceException
    from selenium.webdriver.support.ui import WebDriverWait

    def clicked(d) -> bool:
        try:
            d.find_element(by, selector).click()
        except StaleElementReferenceException:
            return False  # replaced between the find and the click: not clicked, find it again
        return True

    WebDriverWait(driver, timeout).until(clicked)


def start_driver(*, window: str = "1280,1000"):
    """Selenium driving Debian's chromium through its chromedriver, offline; the caller quits it."""
    from selenium import webdriver

    options = webdriver.ChromeOptions()
    options.binary_location = chromium()
    for flag in [*HEADLESS_FLAGS, f"--window-size={window}"]:
        options.add_argument(flag)
    return webdriver.Chrome(options=options, service=webdriver.ChromeService(executable_path=chromedriver()))


def save_screenshot(driver, name: str) -> Path:
    SCREENSHOT_DIR.mkdir(parents=True, exist_ok=True)
    path = SCREENSHOT_DIR / name
    assert driver.save_screenshot(str(path)), path
    return path


def console_errors(url: str, *, ready_selector: str, timeout: float = 30) -> list[dict]:
    """The SEVERE entries of the browser console (failed loads, policy violations, script errors)
    once `ready_selector` is in the page at `url`."""
    from selenium import webdriver
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions
    from selenium.webdriver.support.ui import WebDriverWait

    options = webdriver.ChromeOptions()
    options.binary_location = chromium()
    for flag in [*HEADLESS_FLAGS, "--window-size=1280,1000"]:
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(
        options=options, service=webdriver.ChromeService(executable_path=chromedriver())
    )
    try:
        driver.get(url)
        WebDriverWait(driver, timeout).until(
            expected_conditions.presence_of_element_located((By.CSS_SELECTOR, ready_selector))
        )
        return [entry for entry in driver.get_log("browser") if entry["level"] == "SEVERE"]
    finally:
        driver.quit()
