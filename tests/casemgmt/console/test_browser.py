"""A case worker's flow in a real chromium (Selenium with Debian's chromedriver), offline."""

from __future__ import annotations

import pytest
from selenium import webdriver  # a dev dependency: a missing one is an install error, not a skip

from casemgmt.workflows.models import CaseStep
from tests.casemgmt.conftest import PASSWORD
from tests.support import browser

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def driver():
    options = webdriver.ChromeOptions()
    options.binary_location = browser.chromium()
    for flag in browser.HEADLESS_FLAGS + ["--window-size=1280,1000"]:
        options.add_argument(flag)
    service = webdriver.ChromeService(executable_path=browser.chromedriver())
    chrome = webdriver.Chrome(options=options, service=service)
    yield chrome
    chrome.quit()


def _shot(driver, name: str) -> None:
    browser.SCREENSHOT_DIR.mkdir(parents=True, exist_ok=True)
    assert driver.save_screenshot(str(browser.SCREENSHOT_DIR / name))


def test_log_in_claim_and_complete_a_task_after_a_validation_error(
    driver, live_server, waiting_case, admin_user
):
    from selenium.webdriver.common.by import By

    def shows(text: str) -> None:
        browser.wait_for_text(driver, text)

    driver.get(live_server.url + "/console/")
    shows("Sign in")
    driver.find_element(By.ID, "email").send_keys(admin_user.email)
    driver.find_element(By.ID, "password").send_keys(PASSWORD)
    driver.find_element(By.CSS_SELECTOR, "main button[type=submit]").click()
    shows("Review claim")
    _shot(driver, "console-inbox.png")
    driver.find_element(By.XPATH, "//main//button[contains(., 'Claim')]").click()
    shows("Complete")
    driver.find_element(By.ID, "f-amount").send_keys("0")
    driver.find_element(By.XPATH, "//main//button[.='Complete']").click()
    shows("0 is less than the minimum of 1")
    assert driver.find_element(By.ID, "f-amount").get_attribute("aria-invalid") == "true"
    _shot(driver, "console-task-validation-error.png")
    amount = driver.find_element(By.ID, "f-amount")
    amount.clear()
    amount.send_keys("5")
    driver.find_element(By.ID, "f-approved").click()
    driver.find_element(By.XPATH, "//main//button[.='Complete']").click()
    shows("Review claim — completed")
    _shot(driver, "console-case-after-completion.png")
    row = CaseStep.objects.get(case_id=waiting_case["id"], step_id="review")
    assert (row.status, row.assigned_to_id, row.result) == (
        CaseStep.COMPLETED,
        admin_user.id,
        {"amount": 5, "approved": True},
    )
