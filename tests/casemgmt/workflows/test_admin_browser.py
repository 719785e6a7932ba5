"""A tenant admin publishes a workflow in the Django admin, in a real chromium."""

from __future__ import annotations

import pytest

from casemgmt.workflows.models import Workflow
from tests.casemgmt.conftest import PASSWORD
from tests.casemgmt.workflows.conftest import ok, task_step
from tests.support import browser

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def driver():
    chrome = browser.start_driver()
    yield chrome
    chrome.quit()


def test_tenant_admin_publishes_a_draft_in_the_admin(driver, live_server, flow, admin_user):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    body = {"caseTypeKey": flow.key, "name": "Browser drafted", "steps": [task_step("review")]}
    draft = ok(flow.client.post("/workflows", body, format="json"), 201)

    driver.get(live_server.url + "/admin/login/")
    driver.find_element(By.ID, "id_username").send_keys(admin_user.email)
    driver.find_element(By.ID, "id_password").send_keys(PASSWORD)
    driver.find_element(By.CSS_SELECTOR, "input[type=submit]").click()
    browser.wait_for_text(driver, "Case Management", selector="#site-name")
    driver.get(live_server.url + "/admin/workflows/workflow/")
    browser.wait_for_text(driver, "Browser drafted", selector="#result_list")
    driver.find_element(By.CSS_SELECTOR, f"input[name=_selected_action][value='{draft['id']}']").click()
    Select(driver.find_element(By.NAME, "action")).select_by_value("publish")
    driver.find_element(By.NAME, "index").click()
    browser.wait_for_text(
        driver, "Publish these drafts?", selector="#content"
    )  # the default changes: asked first
    assert Workflow.objects.get(pk=draft["id"]).status == Workflow.DRAFT
    driver.find_element(By.CSS_SELECTOR, "#content input[type=submit]").click()
    browser.wait_for_text(driver, "Browser drafted version 1 published.", selector=".messagelist")
    browser.save_screenshot(driver, "admin-workflow-published.png")
    assert Workflow.objects.get(pk=draft["id"]).status == Workflow.PUBLISHED
