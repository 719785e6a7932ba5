"""The console in a real chromium (Selenium with Debian's chromedriver, offline), against the
orchestrator under daphne with security on and a real agent: sign in, schedule a DAG and watch its
graph turn green, follow a running task's output until it finishes."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest
from selenium.webdriver.common.action_chains import ActionChains
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
    browser.wait_for_text(driver, "Completed", selector="#run-status")
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
        # The run page's table is replaced by its poll every second: the link is found afresh.
        browser.click(driver, By.XPATH, "//main//table//a[.='talker']")
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
    # The facts follow the end of the output without a reload: status, exit code.
    wait_for(lambda: browser.text_of(driver, "#task-exit-code") == "0", timeout=20, what="the exit code")
    assert driver.find_element(By.ID, "task-status").text == "Completed"
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


def js(driver, script: str, *args):
    return driver.execute_script(script, *args)


def run_status(run_id: str) -> str:
    from orchestrator.runs.models import Run

    return Run.objects.get(pk=run_id).status


def test_an_operators_day(server, driver):
    """Issue #28 in one browser session: a schedule made from the form with its next fire times,
    the grid after three runs, a bulk rerun of two failed runs, a log downloaded and searched, the
    run page after 10 s of polling, a cancel that asks first, every page at 375 px, axe-core."""
    from orchestrator.runs.planning import ScheduleOptions
    from orchestrator.runs.services import run_schedule_dag
    from orchestrator.security.services import user_create
    from tests.support import accessibility

    admin = user_create(username=f"adm-{uuid.uuid4().hex[:6]}", password=PASSWORD, role="admin")
    put_task("prep", "echo preparing", queue=QUEUE)
    put_task("score", 'echo scoring; echo "ERROR: model missing" >&2; exit $CODE', dependencies=["prep"],
             parameters={"CODE": "1"}, queue=QUEUE)  # fmt: skip
    put_task("publish", "echo published", dependencies=["score"], queue=QUEUE)
    put_dag("nightly", ["publish"])
    sign_in(driver, server, admin)

    # A schedule from the form: the preview follows the cron expression in the chosen zone.
    driver.get(server + "/console/schedules/new?target=dag:nightly")
    browser.wait_for_text(driver, "Next five fire times")
    cron = driver.find_element(By.ID, "s-cron")
    cron.clear()
    cron.send_keys("15 6 * * *")
    zone = driver.find_element(By.ID, "s-timezone")
    zone.clear()
    zone.send_keys("Asia/Tokyo")
    wait_for(
        lambda: (browser.text_of(driver, "#preview") or "").count("6:15 a.m. JST") == 5,
        timeout=20, what="the preview's five fire times at 06:15 Tokyo time",
    )  # fmt: skip
    browser.save_screenshot(driver, "orch-schedule-form.png")
    driver.find_element(By.ID, "schedule-save").click()
    browser.wait_for_text(driver, "created.")
    assert (browser.text_of(driver, "#upcoming") or "").count("6:15 a.m. JST") == 5
    browser.save_screenshot(driver, "orch-schedule.png")
    driver.get(server + "/console/schedules")
    browser.wait_for_text(driver, "15 6 * * *")
    browser.save_screenshot(driver, "orch-schedules.png")

    # Three runs of the DAG: two fail at `score`, one completes; the grid shows them by task.
    # ... watched from the runs list, which refreshes itself (no reload: the marker stays).
    driver.get(server + "/console/?dag_id=nightly")
    browser.wait_for_text(driver, "No runs match the filters.")
    ActionChains(driver).move_to_element(driver.find_element(By.TAG_NAME, "h1")).perform()
    js(driver, "document.body.dataset.marker = 'same page'")
    ids = [f"nightly-{uuid.uuid4().hex[:6]}-{i}" for i in range(3)]
    for run_id, code in zip(ids, ("1", "1", "0"), strict=True):
        run_schedule_dag(
            dag_id="nightly", options=ScheduleOptions(run_id=run_id, parameters={"score.CODE": code})
        )
    wait_for(
        lambda: all(run_status(r) in ("completed", "failed") for r in ids), timeout=90, what="three runs"
    )
    assert [run_status(r) for r in ids] == ["failed", "failed", "completed"]
    browser.wait_for_text(driver, "1–3 of 3", selector="#runs-table", timeout=30)
    wait_for(lambda: (browser.text_of(driver, "#runs-table") or "").count("Failed") == 2, timeout=30,
             what="the list to show both failures")  # fmt: skip
    assert js(driver, "return document.body.dataset.marker") == "same page"
    driver.get(server + "/console/grid?dag_id=nightly")
    browser.wait_for_text(driver, "The last 3 runs")
    cells = js(driver, "return [...document.querySelectorAll('table.grid tbody tr')].map(r => "
                       "[r.querySelector('th').innerText, [...r.querySelectorAll('a.cell')].map(a => a.dataset.status)])")  # fmt: skip
    assert [task for task, _ in cells] == ["prep", "score", "publish"]  # the graph's order
    assert cells[0][1] == ["completed"] * 3 and cells[1][1] == ["failed", "failed", "completed"]
    assert cells[2][1][2] == "completed" and "completed" not in cells[2][1][:2]
    browser.save_screenshot(driver, "orch-grid.png")

    # Bulk: select the two failed runs, rerun their failed tasks after a confirmation naming two.
    driver.get(server + "/console/?dag_id=nightly&status=failed")
    browser.wait_for_text(driver, "1–2 of 2")
    for run_id in ids[:2]:
        driver.find_element(By.ID, f"select-{run_id}").click()
    driver.find_element(By.CSS_SELECTOR, "button[name=action][value=rerun-failed]").click()
    browser.wait_for_text(driver, "Rerun the failed tasks of 2 runs?")
    browser.save_screenshot(driver, "orch-bulk-confirm.png")
    driver.find_element(By.ID, "bulk-confirm").click()
    browser.wait_for_text(driver, "2 reruns started.")
    from orchestrator.runs.models import Run, TaskRun

    assert set(Run.objects.filter(original_run_id__in=ids).values_list("original_run_id", flat=True)) == set(
        ids[:2]
    )

    # The failed task run's output: download it, search it, jump to its first error line.
    score = TaskRun.objects.get(run_id=ids[0], task_id="score")
    driver.get(server + f"/console/task-runs/{score.id}")
    browser.wait_for_text(driver, "Finished (failed).", selector="#log-state")
    assert browser.text_of(driver, "#task-exit-code") == "1"
    downloaded = driver.execute_async_script(
        "const done = arguments[arguments.length - 1];"
        "fetch(document.getElementById('log-download').href).then(r => r.text().then(t => "
        "done([r.headers.get('content-disposition'), t])));"
    )
    assert downloaded[0] == f'attachment; filename="{score.id}.log"'
    assert "scoring" in downloaded[1] and "ERROR: model missing" in downloaded[1]
    driver.find_element(By.ID, "log-search").send_keys("model")
    browser.wait_for_text(driver, "Match 1 of 1.", selector="#log-matches")
    assert js(driver, "return [...document.querySelectorAll('#log mark')].map(m => m.textContent)") == [
        "model"
    ]
    driver.find_element(By.ID, "log-first-error").click()
    assert "ERROR: model missing" in js(
        driver, "return document.querySelector('#log .error-line').textContent"
    )
    browser.save_screenshot(driver, "orch-log-search.png")

    # The run page of an open run, polled for 10 s: one #run-live, no template comment text.
    gate = Path(f"/tmp/console-{uuid.uuid4().hex}.go")
    put_task("waiter", f"while [ ! -e {gate} ]; do sleep 0.05; done; echo done", queue=QUEUE)
    put_dag("gated", ["waiter"])
    open_run = f"gated-{uuid.uuid4().hex[:6]}"
    run_schedule_dag(dag_id="gated", options=ScheduleOptions(run_id=open_run))
    try:
        driver.get(server + f"/console/runs/{open_run}")
        browser.wait_for_text(driver, "Task runs")
        wait_for(lambda: int(js(driver, "return document.body.dataset.runPolls || '0'")) >= 10, timeout=40,
                 what="ten polls of the run page")  # fmt: skip
        assert js(driver, "return document.querySelectorAll('#run-live').length") == 1
        text = js(driver, "return document.body.innerText")
        assert "{#" not in text and "#}" not in text
        # Cancel asks first; dismissing it changes nothing.
        browser.click(driver, By.ID, "action-cancel")  # in the polled fragment: found afresh
        alert = driver.switch_to.alert
        assert f"Cancel run {open_run}?" in alert.text
        alert.dismiss()
        assert run_status(open_run) in ("pending", "running")
        driver.set_window_size(375, 1400)
        wait_for(lambda: js(driver, "return window.innerWidth") <= 375, timeout=10, what="the phone's width")
        browser.save_screenshot(driver, "orch-run-375.png")
    finally:
        gate.touch()
    wait_for(lambda: run_status(open_run) == "completed", timeout=60, what="the gated run to complete")

    # Every page at 375 px: no horizontal scrolling; stacked tables keep their column names.
    from orchestrator.schedules.models import Schedule

    schedule_id = Schedule.objects.get(dag_id="nightly").id
    pages = {
        "runs": "/console/",
        "run": f"/console/runs/{ids[0]}",
        "grid": "/console/grid?dag_id=nightly",
        "schedules": "/console/schedules",
        "schedule": f"/console/schedules/{schedule_id}",
        "schedule-form": f"/console/schedules/{schedule_id}/edit",
        "task-run": f"/console/task-runs/{score.id}",
        "dags": "/console/dags",
        "dag": "/console/dags/nightly",
        "tasks": "/console/tasks",
        "task": "/console/tasks/score",
        "agents": "/console/agents",
        "queues": "/console/queues",
        "preferences": "/console/preferences",
    }
    overflow, found = {}, {}
    for name, path in pages.items():
        driver.get(server + path)
        browser.wait_for_text(driver, "", selector="main h1")
        width = js(driver, "return document.documentElement.scrollWidth")
        if width > 375:
            overflow[name] = width
        if name in ("runs", "run", "grid", "schedule-form", "task-run", "agents"):
            found[f"{name} (375 px)"] = accessibility.violations(driver)
        browser.save_screenshot(driver, f"orch-{name}-375.png")
    assert overflow == {}
    driver.get(server + f"/console/runs/{ids[0]}")
    browser.wait_for_text(driver, "Task runs")
    assert (
        js(
            driver,
            "return getComputedStyle(document.querySelector('#run-live table.stacked td'), '::before').content",
        )
        == '"Task"'
    )

    # Desktop and the dark theme: axe-core finds nothing serious on the new pages.
    driver.set_window_size(1280, 1000)
    driver.get(server + "/console/preferences")
    browser.wait_for_text(driver, "Preferences")
    driver.find_element(By.CSS_SELECTOR, "#pref-theme option[value=dark]").click()
    driver.find_element(By.CSS_SELECTOR, "main button[type=submit]").click()
    browser.wait_for_text(driver, "Preferences saved.")
    assert js(driver, "return document.documentElement.dataset.scheme") == "dark"
    for name in (
        "runs",
        "run",
        "grid",
        "schedules",
        "schedule",
        "schedule-form",
        "task-run",
        "agents",
        "preferences",
    ):
        driver.get(server + pages[name])
        browser.wait_for_text(driver, "", selector="main h1")
        found[f"{name} (dark)"] = accessibility.violations(driver)
        if name in ("run", "grid", "runs"):
            browser.save_screenshot(driver, f"orch-{name}-dark.png")
    assert {page: v for page, v in found.items() if v} == {}
