"""The web server as deployed (deploy/Procfile's case-web command, the README's production command)
stops on SIGTERM under load within 10 s, answering every request it had already started.

Requests are held in flight deterministically: the test locks the tenant's case-number counter row,
so case creations wait inside the server (seen in pg_stat_activity) until the lock is released
after SIGTERM. Reads keep the server busy meanwhile and a WebSocket is open.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import httpx
import psycopg
import pytest
import websockets
from django.db import connection

from casemgmt.accounts.tokens import issue_for
from tests.support.processes import database_url, start_procfile_server, wait_for

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.worker]

HELD = 6  # case creations held in flight across SIGTERM


@pytest.fixture
def server(subprocess_env):
    proc, base = start_procfile_server("case-web", env=subprocess_env, health_path="/healthz")
    try:
        yield proc, base
    finally:
        proc.stop()


def group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    return True


def group_members(pgid: int) -> str:
    ps = subprocess.run(["ps", "-o", "pid,etime,args", "-g", str(pgid)], capture_output=True, text=True)
    return ps.stdout


def waiting_on_locks(url: str) -> int:
    with psycopg.connect(url, autocommit=True) as conn:
        row = conn.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'"
        ).fetchone()
    return int(row[0]) if row else 0


def test_sigterm_under_load_finishes_in_flight_requests_and_exits_within_10s(server, tenant, admin_user):
    proc, base = server
    headers = {"Authorization": f"Bearer {issue_for(admin_user).token}"}
    schema = {"type": "object", "required": ["name"], "properties": {"name": {"type": "string"}}}
    case_type = httpx.post(
        f"{base}/case-types",
        json={"key": "claim", "displayName": "Claim", "schema": schema},
        headers=headers,
        timeout=30,
    )
    assert case_type.status_code == 201, case_type.text

    def create(n: int) -> httpx.Response:
        body = {"caseTypeId": case_type.json()["id"], "data": {"name": f"held {n}"}}
        return httpx.post(f"{base}/cases", json=body, headers=headers, timeout=30)

    first = create(0)
    assert first.status_code == 201, first.text
    url = database_url(connection.settings_dict)

    # Background reads for the whole test; each outcome is kept.
    stop_reading = threading.Event()
    read_statuses: list[int] = []

    def read_loop() -> None:
        with httpx.Client(headers=headers, timeout=30) as client:
            while not stop_reading.is_set():
                try:
                    read_statuses.append(client.get(f"{base}/cases/{first.json()['id']}").status_code)
                except httpx.TransportError:
                    return  # the server stopped accepting: expected once it shuts down

    async def open_socket():
        ws = await websockets.connect(
            base.replace("http://", "ws://") + f"/ws?token={headers['Authorization'][7:]}"
        )
        await ws.send(json.dumps({"type": "ping"}))
        assert json.loads(await asyncio.wait_for(ws.recv(), timeout=10))["type"] == "pong"
        return ws

    loop = asyncio.new_event_loop()
    ws = loop.run_until_complete(open_socket())
    with ThreadPoolExecutor(max_workers=HELD + 4) as pool:
        try:
            readers = [pool.submit(read_loop) for _ in range(4)]
            wait_for(lambda: len(read_statuses) >= 20, timeout=60, what="reads to flow")
            with psycopg.connect(url) as holder:  # a transaction: the row lock lasts until rollback
                holder.execute(
                    "SELECT 1 FROM cases_casecounter WHERE tenant_id = %s FOR UPDATE", [str(tenant.id)]
                ).fetchone()
                held = [pool.submit(create, n) for n in range(1, HELD + 1)]
                wait_for(
                    lambda: waiting_on_locks(url) >= HELD, timeout=60, what="creations to wait on the lock"
                )

                signalled = time.monotonic()
                proc.proc.send_signal(signal.SIGTERM)  # as a process manager stops it: the main process only

                async def closed_by_server() -> None:
                    with pytest.raises(websockets.ConnectionClosed):
                        await asyncio.wait_for(ws.recv(), timeout=10)

                loop.run_until_complete(closed_by_server())  # shutdown has begun
                assert proc.alive(), "the server exited with requests still in flight"
                assert not any(f.done() for f in held), (
                    "a held request was answered before the lock was released"
                )
                holder.rollback()

            answers = [f.result(timeout=30) for f in held]
            assert [a.status_code for a in answers] == [201] * HELD, [a.text for a in answers]
            numbers = sorted(a.json()["caseNumber"] for a in answers)
            assert len(set(numbers)) == HELD

            # Every process of the server (its workers and helpers too) is gone within 10 s of the signal.
            # (proc.alive() reaps the main process once it exits; the group check sees its children.)
            while (proc.alive() or group_alive(proc.proc.pid)) and time.monotonic() - signalled < 10.5:
                time.sleep(0.05)
            elapsed = time.monotonic() - signalled
            assert elapsed <= 10, (
                f"still running {elapsed:.1f} s after SIGTERM: {group_members(proc.proc.pid)}"
            )
            assert not proc.alive()
            stop_reading.set()
            for reader in readers:
                reader.result(timeout=30)
        finally:
            stop_reading.set()  # a failed check must not leave the readers looping forever
    loop.close()
    assert read_statuses and set(read_statuses) == {200}, set(read_statuses)
