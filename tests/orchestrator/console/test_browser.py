"""The console in a real chromium (Selenium with Debian's chromedriver, offline), against the
orchestrator under daphne with security on and a real agent: sign in, schedule a DAG and watch its
graph turn green, follow a running task's output until it finishes."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest
from selenium.webdriver.common.by import By  # a dev dependency: a missing one is an install error

from orchestrator.runs.models import TaskRun
from tests.orchestrator.console.conftest import PASSWORD, put_dag, put_task
from tests.orchestrator.helpers import start_agent, stop_agents, wait_agent_ready
from tests.support import browser
from tests.support.processes import start_ready_asgi_server, wait_for

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]
QUEUE = f"console-{uuid.uuid4().hex[:6]}"


@pytest.fixture(scope="module")
def server(subprocess_env, django_db_blocker):
    env = {
        **subprocess_env,
        "ORCH_SECURITY_ENABLED": "1",  # the log stream API must accept the console's session
        "ORCH_LOG_STREAM_POLL_SECONDS": "0.1",
    }
    proc, base = start_ready_asgi_server(
        name="orch-console",
        application="orchestrator.config.asgi:application",
        env=env,
        health_path="/api/health",
    )
    agent = start_agent(f"consoleagent-{QUEUE}", QUEUE, subprocess_env)
    try:
        wait_agent_ready(agent)
        yield base.replace("127.0.0.1", "localhost")  # the offline flags resolve no other name
    finally:
        proc.stop()
        stop_agents([agent], django_db_blocker)


@pytest.fixture
def driver():
    chrome = browser.start_driver()
    yield chrome
    chrome.quit()


@pytest.fixture
def operator(db):
    from orchestrator.security.services import user_create

    return user_create(username=f"op-{uuid.uuid4().hex[:6]}", password=PASSWORD, role="operator")


def sign_in(driver, base: str, user) -> None:
    driver.get(base + "/console/")
    browser.wait_for_text(driver, "Sign in")
    driver.find_element(By.ID, "username").send_keys(user.username)
    driver.find_element(By.ID, "password").send_keys(PASSWORD)
    driver.find_element(By.CSS_SELECTOR, "main button[type=submit]").click()
    browser.wait_for_text(driver, "Newest first")


def schedule_from(driver, base: str, path: str) -> None:
    driver.get(base + path)
    driver.find_element(By.XPATH, "//main//button[.='Schedule']").click()
    browser.wait_for_text(driver, "Task runs")


def node_statuses(driver) -> list[str]:
    return [n.get_attribute("data-status") for n in driver.find_elements(By.CSS_SELECTOR, "svg.dag .node")]


def test_schedule_a_dag_and_watch_its_graph_go_green(server, driver, operator):
    put_task("fetch", "echo fetching; sleep 0.5", queue=QUEUE)
    put_task("clean", "echo cleaning; sleep 0.5", dependencies=["fetch"], queue=QUEUE)
    put_task("score", "echo scoring", dependencies=["fetch"], queue=QUEUE)
    put_task("report", "echo report", dependencies=["clean", "score"], queue=QUEUE)
    put_dag("daily", ["report"])
    sign_in(driver, server, operator)
    browser.save_screenshot(driver, "orch-console-runs.png")
    driver.get(server + "/console/dags/daily")
    browser.wait_for_text(driver, "DAG daily")
    assert len(driver.find_elements(By.CSS_SELECTOR, "svg.dag .node")) == 4
    browser.save_screenshot(driver, "orch-console-dag.png")
    schedule_from(driver, server, "/console/dags/daily")
    assert "Run " in driver.find_element(By.TAG_NAME, "h1").text
    # Keyboard focus on a task-run link survives the graph's refreshes (htmx restores it by id).
    focused = f"row-{TaskRun.objects.get(task_id='report').id}"
    driver.execute_script("document.getElementById(arguments[0]).focus()", focused)
    seen: set[str] = set()

    def all_green() -> bool:
        try:
            statuses = node_statuses(driver)
        except Exception:  # noqa: BLE001 - the graph is being swapped; look again
            return False
        seen.update(statuses)
        return len(statuses) == 4 and set(statuses) == {"completed"}

    wait_for(all_green, timeout=60, what="every node of the run graph to be completed")
    browser.wait_for_text(driver, "completed", selector="#run-status")
    assert seen - {"completed"}, "the graph never showed a run in progress"  # it changed live
    assert driver.execute_script("return document.activeElement.id") == focused
    assert driver.find_element(By.ID, "run-announce").get_attribute("textContent") == "Run completed."
    browser.save_screenshot(driver, "orch-console-run-graph-completed.png")
    # The drawing is a DAG: fetch left of clean and score, which are left of report.
    x = {
        n.get_attribute("aria-label").split(":")[0]: n.find_element(By.TAG_NAME, "rect").get_attribute("x")
        for n in driver.find_elements(By.CSS_SELECTOR, "svg.dag .node")
    }
    assert int(x["fetch"]) < int(x["clean"]) == int(x["score"]) < int(x["report"])


def test_follow_a_running_task_log_until_it_finishes(server, driver, operator):
    gate = Path(f"/tmp/console-{uuid.uuid4().hex}.go")
    # The first line comes at once; the rest only after the test opened the gate, over ~1.5 s: the
    # page provably shows output while the task still runs.
    command = f"echo tick 1; while [ ! -e {gate} ]; do sleep 0.05; done; for i in 2 3 4 5 6; do sleep 0.3; echo tick $i; done"
    put_task("talker", command, queue=QUEUE)
    sign_in(driver, server, operator)
    try:
        schedule_from(driver, server, "/console/tasks/talker")
        driver.find_element(By.XPATH, "//main//table//a[.='talker']").click()
        browser.wait_for_text(driver, "tick 1", selector="#log", timeout=60)
        assert TaskRun.objects.get(task_id="talker").status == "running"
        browser.wait_for_text(driver, "Following the output", selector="#log-state")
        browser.save_screenshot(driver, "orch-console-log-following.png")
        gate.touch()
        browser.wait_for_text(driver, "tick 6", selector="#log", timeout=30)
        browser.wait_for_text(driver, "Finished (completed).", selector="#log-state")
    finally:
        gate.touch()
    log = driver.find_element(By.ID, "log").text
    assert [line for line in log.splitlines() if line] == [
        f"tick {i}" for i in range(1, 7)
    ]  # no gaps, no repeats
    assert driver.find_element(By.ID, "task-status").text == "completed"
    browser.save_screenshot(driver, "orch-console-log-finished.png")


def test_main_pages_have_no_serious_accessibility_violations(server, driver, operator):
    from tests.support import accessibility

    put_task("a11y", "echo checked", queue=QUEUE)
    put_dag("a11y-dag", ["a11y"])
    sign_in(driver, server, operator)
    schedule_from(driver, server, "/console/dags/a11y-dag")
    run_page = driver.current_url
    pages = [
        "/console/",
        "/console/dags",
        "/console/dags/a11y-dag",
        "/console/tasks",
        "/console/tasks/a11y",
        "/console/agents",
        "/console/queues",
    ]
    found = {}
    for url in [server + page for page in pages] + [run_page]:
        driver.get(url)
        browser.wait_for_text(driver, "", selector="main h1")
        found[url] = accessibility.violations(driver)
    driver.set_window_size(375, 800)  # a phone's width
    for url in (server + "/console/", run_page):
        driver.get(url)
        found[f"{url} (375 px)"] = accessibility.violations(driver)
    assert {url: v for url, v in found.items() if v} == {}
