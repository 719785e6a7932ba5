"""`dag` steps end to end, with both services as real processes: a case runs a two-task DAG on a
real agent and goes on to a human task when the orchestrator's signed callback arrives; a failing
DAG takes the step's onFailure; a lost callback is made good by the poll; forged, stale and
replayed callbacks change nothing; cancelling the case cancels the run.

Also `caseflow`, the command line, against the same running stack (here rather than in a file of
its own: the test runner distributes whole files, and a second file would start a second stack):
trigger a DAG and follow its logs to the end, a failed run's exit code, the definitions diff over
HTTP, a case worked from the inbox, and the `caseflow` script entry in pyproject."""

from __future__ import annotations

import hashlib
import hmac
import io
import json
import subprocess
import sys
import time
import tomllib
import uuid
from importlib import import_module

import httpx
import pytest

from casemgmt.accounts.tokens import issue_for
from casemgmt.dags.models import DagRun
from casemgmt.dags.tasks import dag_runs_sweep
from casemgmt.workflows.models import CaseStep
from shared.client import cli
from tests.casemgmt.dags.conftest import DAG_QUEUE
from tests.casemgmt.workflows.conftest import Flow, ok, task_step
from tests.support.processes import ROOT, wait_for

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]
SECRET = "orch-callback-secret-1234"
NOWHERE = "http://127.0.0.1:9/nowhere"  # the discard port: nothing listens, deliveries fail


@pytest.fixture
def flow(api, admin_user, settings, stack):
    settings.DAG_QUEUE = DAG_QUEUE  # the test process queues where the worker listens
    settings.CONNECTOR_ALLOWED_HOSTS = ["127.0.0.1"]
    return Flow(api, admin_user)


def configure(flow: Flow, stack, *, callback_url: str | None = None) -> None:
    tenant_id = flow.admin.tenant_id
    config = {"url": stack.orch_url, "apiKey": stack.orch_key, "webhookSecret": SECRET,
              "callbackUrl": callback_url or f"{stack.case_url}/webhooks/orchestrator/{tenant_id}"}  # fmt: skip
    ok(flow.client.put("/connectors/orchestrator/config", {"config": config}, format="json"))


def put_dag(stack, dag_id: str, tasks: dict[str, tuple[str, list[str]]]) -> None:
    for task_id, (command, deps) in tasks.items():
        body = {"command": command, "dependencies": deps}
        assert stack.orch("PUT", f"/api/tasks/{task_id}", body).status_code in (200, 201)
    body = {"tasks": [{"id": t, "parameters": {}} for t in tasks]}
    assert stack.orch("PUT", f"/api/dags/{dag_id}", body).status_code in (200, 201)


def dag_step(dag_id: str, **extra) -> dict:
    return {"id": "run", "name": "Run", "type": "dag", "dagId": dag_id, **extra}


def wait_step(
    case_id: str, step_id: str, statuses=("completed", "failed", "skipped"), timeout=60
) -> CaseStep:
    return wait_for(
        lambda: CaseStep.objects.filter(case_id=case_id, step_id=step_id, status__in=statuses).first(),
        timeout=timeout,
        what=f"step {step_id} to reach {statuses}",
    )


def sign(timestamp: str, body: bytes, secret: str = SECRET) -> str:
    return "sha256=" + hmac.new(secret.encode(), timestamp.encode() + b"." + body, hashlib.sha256).hexdigest()


def test_two_task_dag_completes_then_the_human_task_opens(flow, stack):
    suffix = uuid.uuid4().hex[:6]
    put_dag(stack, f"pipe{suffix}", {f"ex{suffix}": ("echo amount=$AMOUNT", []),
                                    f"ld{suffix}": ("echo loaded", [f"ex{suffix}"])})  # fmt: skip
    configure(flow, stack)
    flow.workflow(
        [
            dag_step(f"pipe{suffix}", parameters={f"ex{suffix}.AMOUNT": "{{case_data.amount}}"}),
            task_step("review"),
        ]
    )
    case = flow.case({"amount": 42})

    # The poll waits 300 s by default: only the callback can finish the step this quickly.
    step = wait_step(case["id"], "run")
    assert step.status == "completed", step.error
    run_id = step.result["runId"]
    assert step.result == {
        "runId": run_id, "status": "completed",
        "tasks": [{"taskId": f"ex{suffix}", "status": "completed"}, {"taskId": f"ld{suffix}", "status": "completed"}],
    }  # fmt: skip
    assert flow.statuses(case["id"])["review"] == "active"
    run = stack.orch("GET", f"/api/runs/{run_id}?include_logs=true").json()
    assert run["tasks"][0]["logs"] == "amount=42"  # the parameter rendered from the case data


def test_failing_dag_takes_on_failure(flow, stack):
    suffix = uuid.uuid4().hex[:6]
    put_dag(stack, f"bad{suffix}", {f"boom{suffix}": ("echo no; exit 3", [])})
    configure(flow, stack)
    flow.workflow([dag_step(f"bad{suffix}", onFailure="skip"), task_step("review")])
    case = flow.case()

    step = wait_step(case["id"], "run")
    assert step.status == "skipped" and "failed" in step.error
    assert step.result["status"] == "failed"
    assert step.result["tasks"] == [{"taskId": f"boom{suffix}", "status": "failed"}]
    assert flow.statuses(case["id"])["review"] == "active"


def test_lost_callback_is_recovered_by_the_poll(flow, stack, settings):
    settings.DAG_POLL_AFTER_SECONDS = 0
    suffix = uuid.uuid4().hex[:6]
    put_dag(stack, f"lost{suffix}", {f"t{suffix}": ("echo ok", [])})
    configure(flow, stack, callback_url=NOWHERE)
    flow.workflow([dag_step(f"lost{suffix}"), task_step("review")])
    case = flow.case()
    dag_run = wait_for(lambda: DagRun.objects.filter(step__case_id=case["id"], status="waiting").first())
    wait_for(lambda: stack.orch("GET", f"/api/runs/{dag_run.run_id}").json()["status"] == "completed",
             what="the run to finish")  # fmt: skip
    assert CaseStep.objects.get(case_id=case["id"], step_id="run").status == "active"  # no callback came

    dag_runs_sweep()  # what the beat runs

    step = CaseStep.objects.get(case_id=case["id"], step_id="run")
    assert step.status == "completed" and step.result["status"] == "completed"
    assert flow.statuses(case["id"])["review"] == "active"


def test_forged_stale_and_replayed_callbacks_change_nothing(flow, stack):
    suffix = uuid.uuid4().hex[:6]
    put_dag(stack, f"cb{suffix}", {f"t{suffix}": ("echo ok", [])})
    configure(flow, stack, callback_url=NOWHERE)
    flow.workflow([dag_step(f"cb{suffix}"), task_step("review")])
    case = flow.case()
    dag_run = wait_for(lambda: DagRun.objects.filter(step__case_id=case["id"], status="waiting").first())
    wait_for(lambda: stack.orch("GET", f"/api/runs/{dag_run.run_id}").json()["status"] == "completed",
             what="the run to finish")  # fmt: skip
    url = f"{stack.case_url}/webhooks/orchestrator/{flow.admin.tenant_id}"
    body = json.dumps(
        {"event": "dag.completed", "data": {"run_id": dag_run.run_id, "status": "completed"}}
    ).encode()

    def post(timestamp: str, signature: str) -> httpx.Response:
        headers = {"Content-Type": "application/json", "X-Service-Timestamp": timestamp,
                   "X-Service-Signature-Timestamped": signature}  # fmt: skip
        return httpx.post(url, content=body, headers=headers, timeout=10)

    now = str(int(time.time()))
    assert post(now, sign(now, body, secret="wrong")).status_code == 401
    stale = str(int(time.time()) - 301)
    assert post(stale, sign(stale, body)).status_code == 401
    assert post(str(int(time.time()) + 5), sign(now, body)).status_code == 401  # timestamp not the signed one
    assert CaseStep.objects.get(case_id=case["id"], step_id="run").status == "active"

    signature = sign(now, body)
    first = post(now, signature)
    assert first.status_code == 200 and first.json() == {"applied": True}
    step = wait_step(case["id"], "run")
    assert step.status == "completed"
    replay = post(now, signature)
    assert replay.status_code == 200 and replay.json() == {"applied": False}
    again = CaseStep.objects.get(pk=step.pk)
    assert (again.status, again.completed_at, again.result) == (step.status, step.completed_at, step.result)


def test_cancelling_the_case_cancels_the_run(flow, stack):
    suffix = uuid.uuid4().hex[:6]
    put_dag(stack, f"slow{suffix}", {f"s{suffix}": ("sleep 60", [])})
    configure(flow, stack)
    flow.workflow([dag_step(f"slow{suffix}"), task_step("review")])
    case = flow.case()
    dag_run = wait_for(lambda: DagRun.objects.filter(step__case_id=case["id"], status="waiting").first())

    ok(flow.client.post(f"/cases/{case['id']}/cancel", {"reason": "duplicate"}, format="json"))

    wait_for(lambda: stack.orch("GET", f"/api/runs/{dag_run.run_id}").json()["status"] == "cancelled",
             timeout=30, what="the run to be cancelled")  # fmt: skip
    assert CaseStep.objects.get(case_id=case["id"], step_id="run").status == "skipped"


def test_timeout_cancels_the_run_and_fails_the_step(flow, stack):
    suffix = uuid.uuid4().hex[:6]
    put_dag(stack, f"long{suffix}", {f"l{suffix}": ("sleep 60", [])})
    configure(flow, stack)
    flow.workflow([dag_step(f"long{suffix}", timeoutSeconds=1, onFailure="escalate"), task_step("review")])
    case = flow.case()
    dag_run = wait_for(lambda: DagRun.objects.filter(step__case_id=case["id"], status="waiting").first())

    def timed_out() -> CaseStep | None:
        dag_runs_sweep()  # what the beat runs
        return CaseStep.objects.filter(case_id=case["id"], step_id="run", escalated=True).first()

    step = wait_for(timed_out, timeout=30, interval=0.3, what="the timeout to fail the step")
    assert step.error.startswith("timeout:") and step.result["status"] in ("pending", "running")
    wait_for(lambda: stack.orch("GET", f"/api/runs/{dag_run.run_id}").json()["status"] == "cancelled",
             timeout=30, what="the run to be cancelled")  # fmt: skip


# --- caseflow, the command line ----------------------------------------------------------------


@pytest.fixture
def caseflow(stack, monkeypatch, tmp_path):
    """Runs `caseflow ARGS` in this process: (exit code, stdout, stderr). The orchestrator comes
    from a config file, the case service from the environment."""
    config = tmp_path / "caseflow.toml"
    config.write_text(f'[orch]\nurl = "{stack.orch_url}"\napi_key = "{stack.orch_key}"\n')
    monkeypatch.setenv("CASEFLOW_CONFIG", str(config))
    monkeypatch.setenv("CASEFLOW_CASE_URL", stack.case_url)

    def run(*args: str) -> tuple[int, str, str]:
        out, err = io.StringIO(), io.StringIO()
        code = cli.main(list(args), out=out, err=err)
        return code, out.getvalue(), err.getvalue()

    return run


def test_trigger_follows_the_logs_to_the_end_and_a_failed_run_exits_non_zero(caseflow, stack, tmp_path):
    suffix = uuid.uuid4().hex[:6]
    put_dag(stack, f"cli{suffix}", {f"a{suffix}": ("echo first line; echo second line", []),
                                   f"b{suffix}": ("echo from b $WHO", [f"a{suffix}"])})  # fmt: skip
    put_dag(stack, f"clibad{suffix}", {f"bad{suffix}": ("echo about to fail; exit 3", [])})

    code, out, err = caseflow("orch", "runs", "trigger", f"cli{suffix}", "--param", f"b{suffix}.WHO=cli",
                              "--follow", "--interval", "0.2")  # fmt: skip
    assert code == cli.OK, err
    run_id = out.splitlines()[0].removeprefix("run_id: ")
    assert f"a{suffix} | first line\na{suffix} | second line\n" in out
    assert f"b{suffix} | from b cli\n" in out and out.endswith(f"run {run_id} completed\n")

    code, out, err = caseflow("orch", "runs", "trigger", f"clibad{suffix}", "--wait", "--interval", "0.2")
    assert code == cli.RUN_FAILED, err
    bad_run = out.splitlines()[0].removeprefix("run_id: ")
    assert "status: failed" in out
    code, out, _ = caseflow("orch", "runs", "logs", bad_run, "--follow")  # ended already: to the end
    assert code == cli.RUN_FAILED and out == (
        f"bad{suffix} | about to fail\nbad{suffix} | [orchestrator] command exited with code 3\n"
        f"run {bad_run} failed\n"
    )

    code, out, _ = caseflow("orch", "runs", "list", "--dag", f"cli{suffix}", "--output", "json")
    assert code == cli.OK and [r["run_id"] for r in json.loads(out)["runs"]] == [run_id]
    code, out, _ = caseflow("orch", "runs", "show", run_id)
    assert code == cli.OK and "status: completed" in out and f"a{suffix}" in out
    code, out, err = caseflow("orch", "runs", "cancel", run_id)  # finished: the service refuses
    assert code == cli.API_ERROR and "HTTP 409" in err
    code, out, _ = caseflow("orch", "runs", "rerun", bad_run, "--failed-only")
    assert code == cli.OK and "run_id: " in out
    code, _, err = caseflow("orch", "runs", "show", "no-such-run")
    assert code == cli.API_ERROR and "HTTP 404 not_found" in err


def test_definitions_diff_is_the_servers_dry_run(caseflow, stack, tmp_path):
    suffix = uuid.uuid4().hex[:6]
    put_dag(stack, f"diff{suffix}", {f"d{suffix}": ("echo old", [])})
    folder = tmp_path / "defs"
    folder.mkdir()
    (folder / "task.yaml").write_text(f"kind: task\nid: d{suffix}\ncommand: echo new\n")
    code, out, err = caseflow("orch", "definitions", "diff", str(folder), "--exit-code")
    assert code == cli.CHANGES, err
    assert f'update    task d{suffix}  (task.yaml)\n    command: "echo old" -> "echo new"\n' in out
    assert stack.orch("GET", f"/api/tasks/d{suffix}").json()["command"] == "echo old"  # a dry run

    (folder / "task.yaml").write_text(f"kind: task\nid: d{suffix}\ncommand: echo old\n")
    code, out, _ = caseflow("orch", "definitions", "diff", str(folder), "--exit-code")
    assert code == cli.OK and "0 to create, 0 to update" in out
    (folder / "task.yaml").write_text(f"kind: task\nid: d{suffix}\n")
    code, _, err = caseflow("orch", "definitions", "diff", str(folder))
    assert code == cli.API_ERROR and "task.yaml:command: This field is required." in err


def test_a_case_is_created_and_its_task_claimed_and_completed(caseflow, api, admin_user, monkeypatch):
    flow = Flow(api, admin_user)
    flow.workflow([task_step("review")])
    monkeypatch.setenv("CASEFLOW_CASE_TOKEN", issue_for(admin_user).token)
    code, out, err = caseflow("case", "cases", "create", "--type", flow.key, "--data", '{"amount": 7}',
                              "--title", "From the CLI")  # fmt: skip
    assert code == cli.OK, err
    case_id = next(line for line in out.splitlines() if line.startswith("id: ")).removeprefix("id: ")
    code, out, _ = caseflow("case", "cases", "list")
    assert code == cli.OK and case_id in out and "From the CLI" in out
    code, out, _ = caseflow("case", "tasks", "inbox", "--status", "unclaimed")
    assert code == cli.OK and f"{case_id}  review" in out
    assert caseflow("case", "tasks", "claim", case_id, "review")[0] == cli.OK
    code, _, err = caseflow("case", "tasks", "complete", case_id, "review", "--data", "{}")
    assert code == cli.API_ERROR and "approved" in err  # the form's required field, as the API says
    code, _, err = caseflow("case", "tasks", "complete", case_id, "review", "--data", '{"approved": true}')
    assert code == cli.OK, err
    assert flow.statuses(case_id)["review"] == "completed"
    assert caseflow("case", "cases", "create", "--type", flow.key, "--data", "[1]")[0] == cli.USAGE


def test_the_caseflow_script_is_declared_and_answers_help():
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    module, _, function = scripts["caseflow"].partition(":")
    assert getattr(import_module(module), function) is cli.main
    done = subprocess.run([sys.executable, "-m", module, "case", "tasks", "complete", "--help"],
                          capture_output=True, text=True, cwd=ROOT, timeout=60)  # fmt: skip
    assert done.returncode == 0 and "--outcome" in done.stdout
    done = subprocess.run([sys.executable, "-m", module, "orch", "runs", "show"],
                          capture_output=True, text=True, cwd=ROOT, timeout=60)  # fmt: skip
    assert done.returncode == cli.USAGE and "run_id" in done.stderr
