"""`make run` (deploy/devserver.py) serves with the production servers of deploy/Procfile on the
embedded default (SQLite, filesystem broker, in-memory channels): the case web under uvicorn (its
static files, console and `/ws` WebSocket), the orchestrator web under uvicorn with
`shared.web.uvicorn_http` (its request deadline, and a task's log followed as server-sent events,
fed by the runner's agent)."""

from __future__ import annotations

import asyncio
import json
import os
import sys
import uuid

import httpx
import pytest
import websockets

from tests.support.asyncdb import receive_json
from tests.support.processes import ROOT, ServiceProcess, free_port, wait_for
from tests.support.slow_client import trickle

BOUND = 2.0  # the orchestrator's request deadline, short for the test


@pytest.fixture(scope="module")
def devserver(tmp_path_factory):
    var = tmp_path_factory.mktemp("devserver")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CASE_", "ORCH_", "DJANGO_", "PYTEST_"))}
    case_port, orch_port = free_port(), free_port()
    env.update(
        PYTHONPATH=str(ROOT),
        CASE_VAR_DIR=str(var / "case"),
        ORCH_VAR_DIR=str(var / "orch"),
        CASE_PORT=str(case_port),
        ORCH_PORT=str(orch_port),
        ORCH_REQUEST_BODY_TIMEOUT_SECONDS=str(BOUND),
    )
    runner = ServiceProcess("devserver", [sys.executable, "deploy/devserver.py"], env)
    case, orch = f"http://127.0.0.1:{case_port}", f"http://127.0.0.1:{orch_port}"

    def answers(url: str) -> bool:
        if not runner.alive():
            raise AssertionError(runner.log_text())
        try:
            return httpx.get(url, timeout=2).status_code in (200, 503)
        except httpx.HTTPError:
            return False

    try:
        wait_for(
            lambda: answers(f"{case}/health") and answers(f"{orch}/api/health"), timeout=300, what="make run"
        )
        yield case, orch, var
    finally:
        runner.stop(timeout=20)


def test_the_case_web_is_the_procfile_uvicorn_with_static_files_and_console(devserver):
    case, orch, _ = devserver
    health = httpx.get(f"{case}/health", timeout=10)
    assert health.headers["server"] == "uvicorn"
    for base, asset in ((case, "console/console.css"), (orch, "orch_console/console.css")):
        static = httpx.get(f"{base}/static/{asset}", timeout=10)
        assert static.status_code == 200 and static.headers["content-type"].startswith("text/css"), static
        console = httpx.get(f"{base}/console/", timeout=10)
        assert console.status_code in (200, 302), console


def test_the_case_websocket_answers_a_signed_in_user(devserver):
    case, _, var = devserver
    credentials = json.loads((var / "case" / "demo-credentials.json").read_text())
    login = httpx.post(f"{case}/auth/login", json=credentials, timeout=10)
    assert login.status_code == 200, login.text

    async def ping() -> dict:
        url = f"{case.replace('http://', 'ws://')}/ws?token={login.json()['token']}"
        async with websockets.connect(url, open_timeout=10) as ws:
            await ws.send(json.dumps({"type": "ping"}))
            return await receive_json(ws)

    assert asyncio.run(ping())["type"] == "pong"


def test_the_orchestrator_web_cuts_off_trickled_headers(devserver):
    """Only shared.web.uvicorn_http bounds the time headers take; plain uvicorn waits for as long as bytes come."""
    _, orch, _ = devserver
    head = b"POST /api/webhooks HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
    result = trickle(
        orch, head[:30], head[30:] + b"Content-Length: 9\r\n\r\n", every=0.5, give_up_after=BOUND + 10
    )
    assert result.status == 408, result


def test_a_task_log_is_followed_as_server_sent_events(devserver):
    _, orch, _ = devserver
    task_id = f"devserver{uuid.uuid4().hex[:6]}"
    put = httpx.put(f"{orch}/api/tasks/{task_id}", json={"command": "echo first; echo second"}, timeout=10)
    assert put.status_code in (200, 201), put.text
    scheduled = httpx.post(f"{orch}/api/schedule-task", json={"task_id": task_id}, timeout=10)
    assert scheduled.status_code == 201, scheduled.text
    url = f"{orch}/api/tasks/{scheduled.json()['task_run_id']}/logs/stream"
    with httpx.stream("GET", url, headers={"Accept": "text/event-stream"}, timeout=60) as stream:
        assert stream.headers["content-type"].startswith("text/event-stream")
        received = "".join(stream.iter_text())
    data = [line.removeprefix("data: ") for line in received.splitlines() if line.startswith("data: ")]
    assert data == ["first", "second", '{"status": "completed"}'], received
