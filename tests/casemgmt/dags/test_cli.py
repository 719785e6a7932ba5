"""`caseflow`, the command line, against both services running as real processes (the dag steps'
stack): trigger a DAG and follow its logs to the end, a failed run's exit code, the definitions
diff over HTTP, and a case worked from the inbox. Also the `caseflow` script entry in pyproject."""

from __future__ import annotations

import io
import json
import subprocess
import sys
import tomllib
import uuid
from importlib import import_module

import pytest

from casemgmt.accounts.tokens import issue_for
from shared.client import cli
from tests.casemgmt.dags.test_dag_steps import put_dag
from tests.casemgmt.workflows.conftest import Flow, task_step
from tests.support.processes import ROOT

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]


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
