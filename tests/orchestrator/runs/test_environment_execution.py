"""The agent's last check on a command's environment, with real agents: a variable the rules allow
reaches the command, and one they refuse (a task run written before the rules existed) never
does, so a BASH_ENV payload does not run."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest

from orchestrator.runs.models import TaskRun
from orchestrator.runs.tasks import execute_task_run
from tests.orchestrator.helpers import put_task, tasks_by_id, wait_run
from tests.orchestrator.security.helpers import api_key_headers

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]


def test_allowed_variables_reach_the_command_and_refused_stored_ones_never_do(agents, api, settings):
    settings.ORCH_SECURITY_ENABLED = True
    admin, operator = api_key_headers("admin", name="env-admin"), api_key_headers("operator", name="env-op")
    marker = Path(tempfile.mkdtemp()) / "pwned"
    # parked on a queue no agent consumes, so its row can be changed before an agent claims it
    command = "bash -c 'echo \"greeting=$GREETING path=$PATH\"'"
    api.credentials(**admin)
    put_task(api, "bash-job", command, queue="nobody-listens", allowed_env=["GREETING"])
    api.credentials(**operator)
    body = {"task_id": "bash-job", "env_vars": {"GREETING": "hello"}}
    response = api.post("/api/schedule-task", body, format="json")
    assert response.status_code == 201, response.content
    scheduled = response.json()
    # what an older version let an operator store: the shell would run the payload before the command
    tr = TaskRun.objects.get(pk=scheduled["task_run_id"])
    payload = {"BASH_ENV": f"$(touch {marker})", "PATH": f"{marker.parent}:/usr/bin:/bin", "LD_PRELOAD": "x"}
    TaskRun.objects.filter(pk=tr.pk).update(env={**tr.env, **payload})
    execute_task_run.apply_async(args=[tr.id, 0], queue="default")

    run = wait_run(api, scheduled["run_id"])
    assert tasks_by_id(run)["bash-job"]["status"] == "completed", run
    assert not marker.exists()
    logs = api.get(f"/api/tasks/{tr.id}/logs").json()["logs"].splitlines()
    assert logs[0] == (
        "[orchestrator] environment variable(s) BASH_ENV, LD_PRELOAD, PATH may not be set by a run; left out"
    )
    assert logs[1].startswith("greeting=hello path=") and str(marker.parent) not in logs[1]
