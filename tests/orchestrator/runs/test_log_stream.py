"""Following a task run's output while it runs: server-sent events from the orchestrator under
daphne, fed by a real agent; the byte caps per connection and per second; the logs endpoint's
permissions."""

from __future__ import annotations

import asyncio
import os
import time
import uuid

import httpx
import jsonschema
import pytest

from orchestrator.runs import logstream
from tests.orchestrator.helpers import api_key, put_task, start_agent, stop_agents, wait_agent_ready
from tests.support.processes import start_ready_asgi_server, wait_for

QUEUE = f"logs-{uuid.uuid4().hex[:6]}"
pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]


@pytest.fixture(scope="module")
def server(subprocess_env, django_db_blocker):
    env = {**subprocess_env, "ORCH_SECURITY_ENABLED": "1", "ORCH_LOG_STREAM_POLL_SECONDS": "0.1"}
    proc, base = start_ready_asgi_server(
        name="orch-asgi-logs",
        application="orchestrator.config.asgi:application",
        env=env,
        health_path="/api/health",
    )
    agent = start_agent(f"logagent-{QUEUE}", QUEUE, subprocess_env)
    try:
        wait_agent_ready(agent)
        yield base
    finally:
        proc.stop()
        stop_agents([agent], django_db_blocker)


def schedule(api, task_id: str) -> str:
    response = api.post("/api/schedule-task", {"task_id": task_id}, format="json")
    assert response.status_code == 201, response.content
    return response.json()["task_run_id"]


def parse(raw: str) -> list[dict[str, str]]:
    events = []
    for block in raw.split("\n\n"):
        fields = dict(line.split(": ", 1) for line in block.splitlines() if not line.startswith(":"))
        if fields:
            events.append(fields)
    return events


def test_follower_sees_lines_while_the_task_still_runs(api, server):
    task_id = f"talk{uuid.uuid4().hex[:6]}"
    # The second line waits on a file the test creates: the task is provably running meanwhile.
    gate = f"/tmp/{task_id}.go"
    put_task(
        api, task_id, f"echo first; while [ ! -e {gate} ]; do sleep 0.05; done; echo second", queue=QUEUE
    )
    task_run_id = schedule(api, task_id)
    headers = {"X-API-Key": api_key("viewer"), "Accept": "text/event-stream"}
    received = ""
    try:
        with httpx.stream(
            "GET", f"{server}/api/tasks/{task_run_id}/logs/stream", headers=headers, timeout=30
        ) as r:
            assert r.status_code == 200 and r.headers["content-type"].startswith("text/event-stream")
            for chunk in r.iter_text():
                received += chunk
                if "data: first" in received and not os.path.exists(gate):
                    assert api.get(f"/api/tasks/{task_run_id}/logs").json()["end_time"] is None
                    open(gate, "w").close()  # still running when the first line arrived: let it go on
    finally:
        open(gate, "a").close()
    events = parse(received)
    assert [e["data"] for e in events if "event" not in e] == ["first", "second"]
    assert events[-1] == {"event": "end", "data": '{"status": "completed"}'}


def test_permissions_match_the_logs_endpoint(server):
    url = f"{server}/api/tasks/none_00000000/logs/stream"
    assert httpx.get(url, timeout=10).status_code == 401
    missing = httpx.get(url, headers={"X-API-Key": api_key("viewer")}, timeout=10)
    assert missing.status_code == 404 and missing.json()["code"] == "not_found", missing.content


def test_byte_caps_per_connection_and_per_second(api, server):
    task_id = f"chatty{uuid.uuid4().hex[:6]}"
    put_task(api, task_id, "for i in $(seq 1 40); do echo line-$i-xxxxxxxxxxxxxxxxxxxx; done", queue=QUEUE)
    task_run_id = schedule(api, task_id)
    wait_for(lambda: api.get(f"/api/tasks/{task_run_id}/logs").json()["end_time"], what="the task to finish")

    async def collect(limits: logstream.Limits) -> tuple[list[dict[str, str]], float]:
        started = time.monotonic()
        chunks = [c async for c in logstream.follow(task_run_id, after_id=0, limits=limits)]
        return parse(b"".join(chunks).decode()), time.monotonic() - started

    capped, _ = asyncio.run(
        collect(logstream.Limits(bytes_per_second=10**6, max_bytes=400, poll_seconds=0.1))
    )
    lines = [e for e in capped if "event" not in e]
    assert 0 < len(lines) < 40 and capped[-1]["event"] == "truncated"
    assert sum(len(logstream.event(e["data"], event_id=int(e["id"]))) for e in lines) <= 400

    # ~45 bytes per event, 40 events, 600 bytes a second: at least two full seconds of pauses.
    slow, elapsed = asyncio.run(
        collect(logstream.Limits(bytes_per_second=600, max_bytes=10**6, poll_seconds=0.1))
    )
    assert len([e for e in slow if "event" not in e]) == 40 and slow[-1]["event"] == "end"
    assert elapsed >= 2


def as_client_reads(events: list[dict[str, str]]) -> list[dict[str, str]]:
    """Events as an SSE client sees them: unnamed ones are `message`, and each keeps the stream's
    last event id."""
    seen, last_id = [], None
    for e in events:
        last_id = e.get("id", last_id)
        seen.append(
            {"event": e.get("event", "message"), "data": e["data"], **({"id": last_id} if last_id else {})}
        )
    return seen


def test_every_event_matches_the_documented_event_schema(api, server):
    task_id = f"doc{uuid.uuid4().hex[:6]}"
    put_task(api, task_id, "echo one; echo two", queue=QUEUE)
    task_run_id = schedule(api, task_id)
    wait_for(lambda: api.get(f"/api/tasks/{task_run_id}/logs").json()["end_time"], what="the task to finish")
    headers = {"X-API-Key": api_key("viewer")}
    document = httpx.get(f"{server}/openapi.json", headers=headers, timeout=30).json()
    operation = document["paths"]["/api/tasks/{task_run_id}/logs/stream"]["get"]
    schema = operation["responses"]["200"]["content"]["text/event-stream"]["schema"]
    ended = as_client_reads(parse(httpx.get(f"{server}/api/tasks/{task_run_id}/logs/stream",
                                            headers=headers, timeout=30).text))  # fmt: skip
    first_event = logstream.event("one", event_id=int(ended[0]["id"]))

    async def truncated() -> bytes:  # room for the first line only
        limits = logstream.Limits(bytes_per_second=10**6, max_bytes=len(first_event), poll_seconds=0.1)
        return b"".join([c async for c in logstream.follow(task_run_id, after_id=0, limits=limits)])

    events = ended + as_client_reads(parse(asyncio.run(truncated()).decode()))
    assert [e["event"] for e in events] == ["message", "message", "end", "message", "truncated"]
    for e in events:
        jsonschema.validate(e, schema)
