"""A case worker's flows in a real chromium (Selenium with Debian's chromedriver), offline, against
daphne (HTTP and the `/ws` WebSocket on one port, as `make run`'s uvicorn serves the console). One browser
per module; each test signs in afresh."""

from __future__ import annotations

from typing import Any

import pytest
from selenium import webdriver  # a dev dependency: a missing one is an install error, not a skip
from selenium.common.exceptions import WebDriverException
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import Select, WebDriverWait

from casemgmt.accounts.services import preferences_update
from casemgmt.vault.models import Document
from casemgmt.workflows.models import CaseStep
from tests.casemgmt.conftest import PASSWORD
from tests.casemgmt.workflows.conftest import Flow
from tests.support import accessibility, browser

pytestmark = pytest.mark.django_db(transaction=True)

TASK_FORM = "Amount (required)"  # shown on the task page only (the inbox's filters say "Completed")


@pytest.fixture(scope="module")
def chrome():
    options = webdriver.ChromeOptions()
    options.binary_location = browser.chromium()
    for flag in browser.HEADLESS_FLAGS + ["--window-size=1280,1000"]:
        options.add_argument(flag)
    service = webdriver.ChromeService(executable_path=browser.chromedriver())
    driver = webdriver.Chrome(options=options, service=service)
    yield driver
    driver.quit()


@pytest.fixture
def driver(chrome, asgi_server):
    """The module's browser, signed out, at the desktop size; its base URL is daphne's (by the
    name `localhost`: the offline flags resolve no other name)."""
    base = asgi_server.replace("127.0.0.1", "localhost")
    chrome.set_window_size(1280, 1000)
    forget_session(chrome)
    chrome.base = base
    return chrome


def _shot(driver, name: str) -> None:
    browser.SCREENSHOT_DIR.mkdir(parents=True, exist_ok=True)
    assert driver.save_screenshot(str(browser.SCREENSHOT_DIR / name))


def shows(driver, text: str, **kwargs: Any) -> None:
    browser.wait_for_text(driver, text, **kwargs)


def until(driver, script: str, what: str, timeout: float = 20) -> None:
    try:
        WebDriverWait(driver, timeout).until(lambda d: d.execute_script(script))
    except WebDriverException:  # the wait's timeout, or the script failing in the page
        raise AssertionError(f"{what} never happened; the page shows: {browser.text_of(driver)}") from None


def accessible(driver, page: str) -> None:
    found = accessibility.violations(driver)
    assert not found, f"{page}: {found}"


def forget_session(driver) -> None:
    """Signed out, for sure: leave the page first, so no request it still has in flight (the live
    ticket's POST saves the session) puts the session cookie back after it is deleted."""
    driver.get("about:blank")
    driver.execute_cdp_cmd("Network.clearBrowserCookies", {})


def sign_in(driver, user, path: str = "/console/") -> None:
    driver.get(driver.base + path)
    shows(driver, "Sign in")
    driver.find_element(By.ID, "email").send_keys(user.email)
    driver.find_element(By.ID, "password").send_keys(PASSWORD)
    driver.find_element(By.CSS_SELECTOR, "main button[type=submit]").click()
    until(driver, "return !!document.getElementById('live')", "signing in")


def live_socket_open(driver) -> None:
    until(driver, "return document.documentElement.dataset.live === 'open'", "the live socket to open")


def test_log_in_claim_and_complete_a_task_after_a_validation_error(driver, waiting_case, admin_user):
    driver.get(driver.base + "/console/")
    shows(driver, "Sign in")
    accessible(driver, "login")
    sign_in(driver, admin_user)
    shows(driver, "Review claim")
    accessible(driver, "inbox")
    _shot(driver, "console-inbox.png")
    press(driver, "#inbox-live td form button")  # Claim (the inbox reloads itself on live updates)
    shows(driver, TASK_FORM)
    driver.find_element(By.ID, "f-amount").send_keys("0")
    driver.find_element(By.XPATH, "//main//button[.='Complete']").click()
    shows(driver, "Amount must be at least 1")
    assert driver.find_element(By.ID, "f-amount").get_attribute("aria-invalid") == "true"
    accessible(driver, "task with a validation error")
    _shot(driver, "console-task-validation-error.png")
    amount = driver.find_element(By.ID, "f-amount")
    amount.clear()
    amount.send_keys("5")
    driver.find_element(By.ID, "f-approved").click()
    driver.find_element(By.XPATH, "//main//button[.='Complete']").click()
    shows(driver, "Review claim — Completed")
    _shot(driver, "console-case-after-completion.png")
    row = CaseStep.objects.get(case_id=waiting_case["id"], step_id="review")
    assert (row.status, row.assigned_to_id, row.result) == (
        CaseStep.COMPLETED,
        admin_user.id,
        {"amount": 5, "approved": True},
    )


def test_a_case_change_made_elsewhere_arrives_live(driver, waiting_case, admin_user, api):
    sign_in(driver, admin_user, f"/console/cases/{waiting_case['id']}")
    shows(driver, "Broken window")
    live_socket_open(driver)
    accessible(driver, "case detail")
    client = api(admin_user)
    patch = {"data": {"title": "Window replaced, glazier booked"}}
    assert client.patch(f"/cases/{waiting_case['id']}/data", patch, format="json").status_code == 200
    shows(driver, "Window replaced, glazier booked")
    shows(driver, "version 2")
    _shot(driver, "console-case-live-update.png")
    # The inbox too: a task that appears while it is open shows up without a reload.
    driver.find_element(By.LINK_TEXT, "Inbox").click()
    until(driver, "return !!document.getElementById('inbox-live')", "the inbox to open")
    shows(driver, waiting_case["caseNumber"])
    flow = Flow(api, admin_user)
    flow.workflow([{"id": "inspect", "name": "Inspect site", "type": "task"}])
    live_socket_open(driver)
    flow.case({"amount": 4, "title": "Leaking roof"})
    shows(driver, "Inspect site")
    _shot(driver, "console-inbox-live-update.png")


# Test instrumentation, installed in every document the browser loads (CDP): records the socket's
# messages, can hold the page's htmx responses (XHR `load` handlers) and its live-ticket requests
# (fetch) until the test releases them, so each race below is set up step by step, without sleeps.
INSTRUMENT = """
window.__live = {messages: [], holdResponses: false, heldResponses: [], heldTickets: []};
(function () {
  var NativeSocket = window.WebSocket;
  window.WebSocket = function (url, protocols) {
    var ws = new NativeSocket(url, protocols);
    ws.addEventListener("message", function (e) { window.__live.messages.push(e.data); });
    return ws;
  };
  window.WebSocket.prototype = NativeSocket.prototype;
  var send = XMLHttpRequest.prototype.send;
  XMLHttpRequest.prototype.send = function (body) {
    var xhr = this, onload = this.onload;
    if (window.__live.holdResponses && onload) {
      this.onload = function () { window.__live.heldResponses.push(function () { onload.call(xhr); }); };
    }
    return send.call(this, body);
  };
  var nativeFetch = window.fetch;
  window.fetch = function (resource, init) {
    if (sessionStorage.getItem("hold-tickets") !== "yes") return nativeFetch.call(window, resource, init);
    return new Promise(function (resolve, reject) {
      window.__live.heldTickets.push(function () { nativeFetch.call(window, resource, init).then(resolve, reject); });
    });
  };
})();
"""


@pytest.fixture
def instrumented(driver):
    added = driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": INSTRUMENT})
    yield driver
    driver.execute_cdp_cmd("Page.removeScriptToEvaluateOnNewDocument", {"identifier": added["identifier"]})
    driver.execute_script("sessionStorage.clear()")


def _messages(driver) -> int:
    return driver.execute_script("return window.__live.messages.length")


def test_no_live_update_is_lost_around_the_socket_opening_a_reload_or_a_navigation(
    instrumented, waiting_case, admin_user, api
):
    """Issue #24: a case created while the inbox was being rendered, reloaded or navigated to
    must still show up. Each race is pinned: the response that was read before the commit is held
    until the commit's message has arrived (or, before the socket opened, could not arrive)."""
    driver = instrumented
    flow = Flow(api, admin_user)
    flow.workflow([{"id": "inspect", "name": "Inspect site", "type": "task"}])
    sign_in(driver, admin_user)
    live_socket_open(driver)

    # 1. Created between the page's render and the socket's subscription: nobody was subscribed,
    # so the page reloads its regions once the socket opens.
    driver.execute_script("sessionStorage.setItem('hold-tickets', 'yes')")
    driver.get(driver.base + "/console/")
    until(driver, "return window.__live.heldTickets.length === 1", "the ticket request to be held")
    before_socket = flow.case({"amount": 4, "title": "Leaking roof"})
    assert before_socket["caseNumber"] not in browser.text_of(driver, "main")
    driver.execute_script("sessionStorage.removeItem('hold-tickets'); window.__live.heldTickets.pop()()")
    live_socket_open(driver)
    shows(driver, before_socket["caseNumber"])

    # 2. Created while a reload of the inbox was in flight: that response was read before the
    # commit, so the message asks for one more reload after it.
    driver.execute_script("window.__live.holdResponses = true")
    first = flow.case({"amount": 5, "title": "Cracked tile"})
    until(driver, "return window.__live.heldResponses.length === 1", "the inbox reload to be held")
    seen = _messages(driver)
    during_reload = flow.case({"amount": 6, "title": "Blocked gutter"})
    until(driver, f"return window.__live.messages.length > {seen}", "the second case's message")
    driver.execute_script("window.__live.holdResponses = false; window.__live.heldResponses.pop()()")
    shows(driver, first["caseNumber"])
    shows(driver, during_reload["caseNumber"])

    # 3. Created while a navigation to the inbox was in flight: the page arrives without it and
    # no region was there to reload when its message came.
    driver.find_element(By.LINK_TEXT, "Cases").click()
    until(driver, "return !document.getElementById('inbox-live')", "the cases list to open")
    driver.execute_script("window.__live.holdResponses = true")
    driver.find_element(By.LINK_TEXT, "Inbox").click()
    until(driver, "return window.__live.heldResponses.length === 1", "the inbox response to be held")
    seen = _messages(driver)
    during_navigation = flow.case({"amount": 7, "title": "Loose railing"})
    until(driver, f"return window.__live.messages.length > {seen}", "the third case's message")
    driver.execute_script("window.__live.holdResponses = false; window.__live.heldResponses.pop()()")
    until(driver, "return !!document.getElementById('inbox-live')", "the inbox to open")
    shows(driver, during_navigation["caseNumber"])


def test_upload_a_document_and_see_it_listed(driver, waiting_case, admin_user, tmp_path):
    sign_in(driver, admin_user, f"/console/cases/{waiting_case['id']}")
    shows(driver, "No documents.")
    path = tmp_path / "glazier-quote.pdf"
    path.write_bytes(b"%PDF-1.4 quote for one window")
    driver.find_element(By.ID, "upload-file").send_keys(str(path))
    driver.find_element(By.ID, "upload-description").send_keys("Glazier's quote")
    driver.find_element(By.XPATH, "//main//button[.='Upload']").click()
    shows(driver, "glazier-quote.pdf")
    _shot(driver, "console-document-uploaded.png")
    document = Document.objects.get(case_id=waiting_case["id"])
    assert (document.filename, document.description) == ("glazier-quote.pdf", "Glazier's quote")


def test_a_draft_autosaves_and_is_restored_after_a_reload(driver, waiting_case, admin_user):
    sign_in(driver, admin_user, f"/console/tasks/{waiting_case['id']}/review")
    shows(driver, TASK_FORM)
    driver.find_element(By.ID, "f-amount").send_keys("42")
    driver.find_element(By.ID, "f-note").send_keys("call back Monday")
    shows(driver, "Draft saved at")
    until(
        driver,
        "return document.getElementById('draft-status').textContent.includes('Draft saved')",
        "the draft to be saved",
    )
    WebDriverWait(driver, 20).until(
        lambda d: (
            (CaseStep.objects.get(case_id=waiting_case["id"], step_id="review").draft or {}).get("note")
            == "call back Monday"
        )
    )
    driver.refresh()
    shows(driver, "Draft saved at")
    assert driver.find_element(By.ID, "f-amount").get_attribute("value") == "42"
    assert driver.find_element(By.ID, "f-note").get_attribute("value") == "call back Monday"
    _shot(driver, "console-task-draft-restored.png")


def test_dashboard_charts_preferences_and_accessibility_on_every_main_page(driver, waiting_case, admin_user):
    sign_in(driver, admin_user, "/console/dashboard")
    shows(driver, "SLA compliance")
    until(
        driver,
        "return [...document.querySelectorAll('canvas[data-chart]')].every(c => Chart.getChart(c))",
        "the charts to be drawn",
    )
    accessible(driver, "dashboard")
    _shot(driver, "console-dashboard.png")
    driver.get(driver.base + "/console/cases")
    shows(driver, waiting_case["caseNumber"])
    accessible(driver, "cases")
    driver.get(driver.base + "/console/preferences")
    shows(driver, "Theme")
    accessible(driver, "preferences")
    Select(driver.find_element(By.ID, "pref-theme")).select_by_value("High Contrast Dark")
    driver.find_element(By.XPATH, "//main//button[.='Save']").click()
    shows(driver, "Preferences saved.")
    scheme = "return document.documentElement.dataset.scheme"
    assert driver.execute_script(scheme) == "dark"
    background = "return getComputedStyle(document.body).backgroundColor"
    assert driver.execute_script(background) == "rgb(0, 0, 0)"
    accessible(driver, "preferences, high contrast dark")
    _shot(driver, "console-preferences-high-contrast.png")
    for path, text in (
        ("/console/", "Review claim"),
        (f"/console/cases/{waiting_case['id']}", "Broken window"),
        (f"/console/tasks/{waiting_case['id']}/review", TASK_FORM),
        ("/console/dashboard", "SLA compliance"),
    ):
        driver.get(driver.base + path)
        shows(driver, text)
        assert driver.execute_script(scheme) == "dark", path
        accessible(driver, f"{path} in high contrast dark")


def test_keyboard_and_a_phones_width(driver, waiting_case, admin_user):
    sign_in(driver, admin_user)
    shows(driver, "Review claim")
    driver.set_window_size(375, 800)
    for path, text in (
        ("/console/", "Review claim"),
        (f"/console/cases/{waiting_case['id']}", "Broken window"),
    ):
        driver.get(driver.base + path)
        shows(driver, text)
        fits = "return document.documentElement.scrollWidth <= document.documentElement.clientWidth"
        assert driver.execute_script(fits), f"{path} scrolls sideways at a phone's width"
    _shot(driver, "console-case-phone.png")
    driver.get(driver.base + "/console/")
    shows(driver, "Review claim")
    # The first Tab reaches the skip link, which moves focus to the content.
    driver.find_element(By.TAG_NAME, "body").send_keys(Keys.TAB)
    focused = driver.switch_to.active_element
    assert focused.text == "Skip to content"
    focused.send_keys(Keys.ENTER)
    until(driver, "return location.hash === '#main'", "the skip link to move to the content")
    # Claiming works from the keyboard alone.
    claim = driver.find_element(By.XPATH, "//main//button[contains(., 'Claim')]")
    claim.send_keys(Keys.ENTER)
    shows(driver, TASK_FORM)
    assert CaseStep.objects.get(case_id=waiting_case["id"], step_id="review").assigned_to_id == admin_user.id


@pytest.mark.parametrize("theme", ["Dark", "High Contrast Light"])
def test_the_other_seeded_themes_keep_their_contrast(driver, waiting_case, admin_user, theme):
    preferences_update(user=admin_user, changes={"theme": theme})
    sign_in(driver, admin_user)
    for path, text in (
        ("/console/", "Review claim"),
        (f"/console/tasks/{waiting_case['id']}/review", TASK_FORM),
    ):
        driver.get(driver.base + path)
        shows(driver, text)
        accessible(driver, f"{path} in {theme}")
    _shot(driver, f"console-task-{theme.lower().replace(' ', '-')}.png")


NEW_PASSWORD = "a-long-and-unusual-passphrase-77"


def _both_widths(driver, name: str) -> None:
    """Screenshots at the desktop width and at a phone's (375 px), which must not scroll sideways."""
    _shot(driver, f"{name}-1280.png")
    driver.set_window_size(375, 800)
    fits = "return document.documentElement.scrollWidth <= document.documentElement.clientWidth"
    assert driver.execute_script(fits), f"{name} scrolls sideways at a phone's width"
    _shot(driver, f"{name}-375.png")
    driver.set_window_size(1280, 1000)


def press(driver, selector: str) -> None:
    """Clicks the element in one script (found and clicked at once: a live refresh between a
    separate find and click would leave a stale reference)."""
    script = "const e = document.querySelector(arguments[0]); if (e) { e.click(); } return !!e;"
    until(driver, f"return (function(a){{ {script} }})({selector!r})", f"clicking {selector}")


def _sign_in_as(driver, email: str, password: str) -> None:
    forget_session(driver)
    driver.get(driver.base + "/console/login")
    shows(driver, "Sign in")
    driver.find_element(By.ID, "email").send_keys(email)
    driver.find_element(By.ID, "password").send_keys(password)
    driver.find_element(By.CSS_SELECTOR, "main button[type=submit]").click()
    until(driver, "return !!document.getElementById('live')", "signing in")


def _invite(driver, settings, admin_user) -> str:
    """The admin adds Nora in the Django admin; her welcome email goes out through SMTP (a real
    local server) and its link, on the public base URL, is returned."""
    from casemgmt.accounts.models import User
    from casemgmt.accounts.tasks import send_welcome_email
    from tests.support.smtp import smtp_sink

    sign_in(driver, admin_user)
    driver.get(driver.base + "/admin/accounts/user/add/")
    driver.find_element(By.ID, "id_email").send_keys("nora@acme.test")
    driver.find_element(By.ID, "id_display_name").send_keys("Nora Newcomer")
    Select(driver.find_element(By.ID, "id_roles_from")).select_by_visible_text("Case Worker")
    driver.find_element(By.ID, "id_roles_add").click()
    assert driver.find_element(By.ID, "id_onboarding_0").is_selected()  # "Invite by email" by default
    driver.find_element(By.NAME, "_save").click()
    WebDriverWait(driver, 20).until(lambda d: User.objects.filter(email="nora@acme.test").exists())
    nora = User.objects.get(email="nora@acme.test")
    with smtp_sink() as (inbox, port):
        settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
        settings.EMAIL_HOST, settings.EMAIL_PORT = "127.0.0.1", port
        settings.EMAIL_USE_TLS = settings.EMAIL_USE_SSL = False
        settings.PUBLIC_BASE_URL = driver.base
        send_welcome_email.apply(args=[str(nora.id)])
        WebDriverWait(driver, 20).until(lambda d: inbox.to("nora@acme.test"))
        body = inbox.to("nora@acme.test")[0].get_payload(decode=True).decode()
    return next(line.strip() for line in body.splitlines() if "/console/password/set?token=" in line)


def _start_case(driver, key: str) -> str:
    """The new-case form from the case type's schema: refused in words first, then started."""
    driver.find_element(By.LINK_TEXT, "New Case").click()
    shows(driver, "Continue")
    Select(driver.find_element(By.ID, "new-type")).select_by_value(key)
    driver.find_element(By.XPATH, "//main//button[.='Continue']").click()
    shows(driver, "Amount claimed (required)")
    driver.find_element(By.ID, "f-amount_claimed").send_keys("12.5")
    driver.find_element(By.ID, "f-due_from").send_keys("12312026")  # the date picker's keyboard entry
    driver.find_element(By.XPATH, "//main//button[starts-with(., 'Start')]").click()
    shows(driver, "Amount claimed must be a whole number")
    shows(driver, "Full name is required")
    accessible(driver, "new case with errors")
    _both_widths(driver, "console-new-case-errors")
    amount = driver.find_element(By.ID, "f-amount_claimed")
    amount.clear()
    amount.send_keys("1200")
    driver.find_element(By.ID, "f-claimant-name").send_keys("Ada Lovelace")
    Select(driver.find_element(By.ID, "f-channel")).select_by_value("phone")
    driver.find_element(By.ID, "f-tags").send_keys("windscreen\nurgent")
    driver.find_element(By.XPATH, "//main//button[starts-with(., 'Start')]").click()
    shows(driver, "started.")
    return driver.current_url.rsplit("/", 1)[1]


def test_a_case_workers_day_invite_start_claim_release_reassign_complete_close_and_page(
    driver, admin_user, api, settings
):
    from casemgmt.accounts.models import User
    from casemgmt.cases.models import Case
    from tests.casemgmt.console.test_case_pages import claim_type

    key = claim_type(api, admin_user, outcomes=["paid", "rejected"])
    link = _invite(driver, settings, admin_user)
    assert link.startswith(driver.base + "/console/password/set?token=")
    # Nora follows the link (signed out), chooses her password and lands in her inbox.
    forget_session(driver)
    driver.get(link)
    shows(driver, "Choose your password")
    accessible(driver, "set password")
    _both_widths(driver, "console-set-password")
    driver.find_element(By.ID, "new-password").send_keys(NEW_PASSWORD)
    driver.find_element(By.ID, "confirm-password").send_keys(NEW_PASSWORD)
    driver.find_element(By.XPATH, "//main//button[starts-with(., 'Set password')]").click()
    shows(driver, "Your password is set. Welcome!")
    assert driver.current_url == driver.base + "/console/"
    nora = User.objects.get(email="nora@acme.test")
    # The admin starts a case from the generated form, claims its task and hands it to Nora.
    forget_session(driver)
    sign_in(driver, admin_user)
    case_id = _start_case(driver, key)
    accessible(driver, "case page, just started")
    press(driver, "#case-live li a[href*='/console/tasks/']")  # "open task" (the region reloads live)
    shows(driver, "Case data")
    press(driver, "main [data-shortcut='c']")
    shows(driver, "You hold “Review claim” now.")
    accessible(driver, "task, claimed")
    _both_widths(driver, "console-task-claimed")
    press(driver, "main [data-shortcut='r']")
    shows(driver, "“Review claim” released")
    driver.find_element(By.TAG_NAME, "body").send_keys("c")  # claim again, from the keyboard
    shows(driver, "You hold “Review claim” now.")
    Select(driver.find_element(By.ID, "reassign-to")).select_by_value(str(nora.id))
    driver.find_element(By.XPATH, "//main//button[.='Reassign']").click()
    shows(driver, "“Review claim” is now with Nora Newcomer.")
    # Nora completes it and closes the case with its outcome.
    _sign_in_as(driver, nora.email, NEW_PASSWORD)
    shows(driver, "Review claim")
    press(driver, "#inbox-live a[href$='/review']")
    shows(driver, "Approved amount (required)")
    driver.find_element(By.ID, "f-approved_amount").send_keys("1100")
    driver.find_element(By.XPATH, "//main//button[.='Complete']").click()
    shows(driver, "“Review claim” completed.")
    shows(driver, "ready to close")
    Select(driver.find_element(By.ID, "close-outcome")).select_by_value("paid")
    driver.find_element(By.ID, "close-reason").send_keys("Paid by transfer")
    driver.find_element(By.XPATH, "//main//button[starts-with(., 'Close')]").click()
    shows(driver, "closed.")
    shows(driver, "outcome: paid")
    state = "return document.querySelector(\"svg.dag [data-node='review']\").dataset.status"
    assert driver.execute_script(state) == "completed"
    assert Case.objects.get(pk=case_id).outcome == "paid"
    accessible(driver, "case page, closed")
    _both_widths(driver, "console-case-closed")
    # Sixty tasks in the inbox, 25 a page: page through them (and j / c from the keyboard).
    from tests.casemgmt.workflows.conftest import Flow

    flow = Flow(api, admin_user)
    flow.workflow([{"id": "triage", "name": "Triage intake", "type": "task"}])
    for n in range(60):
        flow.case({"amount": n + 1, "title": f"Intake {n + 1}"})
    forget_session(driver)
    sign_in(driver, admin_user)
    shows(driver, "1–25 of 60")
    accessible(driver, "inbox, first page")
    _both_widths(driver, "console-inbox-paged")
    press(driver, "main a[rel=next]")
    shows(driver, "26–50 of 60")
    press(driver, "main a[rel=next]")
    shows(driver, "51–60 of 60")
    assert not driver.find_elements(By.CSS_SELECTOR, "main a[rel=next]")
    label = "return document.querySelector(\"main [data-shortcut='c']\").getAttribute('aria-label')"
    assert driver.execute_script(label).startswith("Claim Triage intake for case ")
    driver.find_element(By.TAG_NAME, "body").send_keys("j")
    until(driver, "return !!document.activeElement.closest('tr[data-row]')", "j to reach the first row")
    driver.switch_to.active_element.send_keys("c")
    shows(driver, "You hold “Triage intake” now.")


def bulk_submit(driver, action: str, rows: str) -> None:
    """Selects the inbox rows matching `rows` and submits the bulk form in one script: the inbox's
    live region may reload (and replace its checkboxes) at any moment between two WebDriver calls."""
    Select(driver.find_element(By.ID, "bulk-action")).select_by_value(action)
    driver.execute_script(
        "document.querySelectorAll(arguments[0]).forEach(function (box) { box.checked = true; });"
        "document.querySelector('#bulk-tasks button[type=submit]').click();",
        rows,
    )


def test_bulk_release_reassign_out_of_office_and_a_comment_arriving_live(
    driver, waiting_case, admin_user, api, make_user, tenant
):
    """Work distribution in one session: release a task and reassign two from the inbox's
    selection, set out of office on the preferences page, and see another user's comment arrive
    live on the case page."""
    flow = Flow(api, admin_user)
    flow.workflow([{"id": "inspect", "name": "Inspect site", "type": "task"}])
    second = flow.case({"amount": 4, "title": "Leaking roof"})
    target = make_user(tenant, permissions=["tasks:claim", "tasks:complete"], display_name="Tess Target")
    assert api(admin_user).post(f"/tasks/{second['id']}/inspect/claim").status_code == 200
    sign_in(driver, admin_user)
    shows(driver, "Inspect site")
    accessible(driver, "inbox with selection")
    live_socket_open(driver)
    bulk_submit(driver, "release", f"input[value='{second['id']}/inspect']")
    shows(driver, "1 of 1 succeeded.")
    assert CaseStep.objects.get(case_id=second["id"], step_id="inspect").assigned_to_id is None

    driver.get(driver.base + "/console/")
    shows(driver, "Inspect site")
    live_socket_open(driver)
    Select(driver.find_element(By.ID, "bulk-assign")).select_by_visible_text("Tess Target")
    bulk_submit(driver, "reassign", "input[name=task]")
    shows(driver, "2 of 2 succeeded.")
    _shot(driver, "console-bulk-result.png")
    assert CaseStep.objects.filter(assigned_to=target).count() == 2

    driver.get(driver.base + "/console/preferences")
    shows(driver, "Out of office")
    driver.execute_script(
        "document.getElementById('away-from').value = '2020-01-01T09:00';"
        "document.getElementById('away-until').value = '2999-01-01T09:00';"
    )
    Select(driver.find_element(By.ID, "away-delegate")).select_by_visible_text("Tess Target")
    driver.find_element(By.XPATH, "//main//button[.='Set out of office']").click()
    shows(driver, "You are out of office now.")
    accessible(driver, "preferences with out of office")

    driver.get(driver.base + f"/console/cases/{waiting_case['id']}")
    shows(driver, "No comments yet.")
    live_socket_open(driver)
    writer = make_user(tenant, permissions=["cases:read", "cases:update"])
    posted = api(writer).post(
        f"/cases/{waiting_case['id']}/comments", {"body": "Glazier booked"}, format="json"
    )
    assert posted.status_code == 201
    shows(driver, "Glazier booked")
    _shot(driver, "console-case-comment-live.png")
