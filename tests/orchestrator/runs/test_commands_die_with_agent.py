"""A killed agent's commands die with it: the agent's Python processes (main and pool children) get
SIGKILL, as from a supervisor or the OOM killer, and the command, its background children and the
agent process's reaper are all gone within seconds."""

from __future__ import annotations

import os
import uuid

import psutil
import pytest

from orchestrator.runs.models import TaskRun
from tests.orchestrator.helpers import put_task, start_agent, stop_agents, wait_agent_ready
from tests.support.processes import wait_for

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]


def alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def read_pids(path) -> list[int] | None:
    text = path.read_text() if path.exists() else ""
    pids = [int(p) for p in text.split()]
    return pids if len(pids) == 3 else None


def test_a_commands_processes_die_when_its_agent_is_killed(subprocess_env, django_db_blocker, api, tmp_path):
    name = f"pdeath-{uuid.uuid4().hex[:6]}"
    agent = start_agent(name, f"q-{name}", subprocess_env, concurrency=1)
    try:
        wait_agent_ready(agent)
        pidfile = tmp_path / "pids"
        # the shell, a background child and a foreground child, each writing its pid
        command = (
            f"sleep 300 & echo $! >> {pidfile}; sleep 301 & echo $! >> {pidfile}; echo $$ >> {pidfile}; wait"
        )
        put_task(api, "orphan", command, queue=f"q-{name}")
        tr_id = api.post("/api/schedule-task", {"task_id": "orphan"}, format="json").json()["task_run_id"]
        pids = wait_for(lambda: read_pids(pidfile), timeout=30, what="the command's pids")
        assert all(alive(p) for p in pids)
        assert TaskRun.objects.get(pk=tr_id).status == "running"
        pool_process = psutil.Process(pids[2]).parent()
        assert pool_process is not None
        reapers = [c for c in pool_process.children() if "reaper.py" in " ".join(c.cmdline())]
        assert len(reapers) == 1
        reaper = reapers[0].pid
        agent_python = [agent.proc.pid, *(c.pid for c in psutil.Process(agent.proc.pid).children())]
        assert pool_process.pid in agent_python
        assert os.getpgid(reaper) != os.getpgid(agent.proc.pid)  # outside the agent's group

        agent.kill()  # SIGKILL to the agent's process group: main process and pool children
        agent.proc.wait(timeout=10)
        # a killed process with much memory takes a moment to be torn down
        wait_for(
            lambda: not any(alive(p) for p in agent_python), timeout=10, what="the agent's processes to die"
        )
        wait_for(
            lambda: not any(alive(p) for p in [*pids, reaper]),
            timeout=5,
            what="the command's processes to die",
        )
    finally:
        stop_agents([agent], django_db_blocker)
