"""WebSocket churn: many sockets opened and closed at once against the case web (uvicorn).

    python bench/faults/ws_churn.py [--sockets 1000] [--rounds 3] [--auth ticket|token]

A private PostgreSQL and redis-server; the case service's web command exactly as deploy/Procfile
runs it (uvicorn, 2 workers). One "live" socket stays open throughout. Each round opens `--sockets`
more (at most 100 handshakes at a time, each with its own ticket from `POST /ws/ticket`, or the JWT
in `?token=` with `--auth token`), waits until each is subscribed (its ping answered), then closes
them all at once. Then, within a bounded wait:

- the tenant's channel group in Redis (a sorted set, one member per subscribed socket) must come
  back to 1, the live socket; the figure is the size it settled at and how long that took;
- a case update through the API (a real `case:updated` broadcast from a web worker) must reach the
  live socket; the figure is its latency.

The sockets of every round are closed by this process, so any member left in the group is a leak.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
import traceback
from pathlib import Path

import httpx
import redis
import websockets

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from bench.faults.harness import Figures, environment_note, new_token, ok, print_table, private_services  # noqa: E402
from bench.faults.services import CaseStack  # noqa: E402
from tests.support.processes import start_procfile_server  # noqa: E402

OPEN_AT_ONCE = 100
SETTLE_SECONDS = 60  # bounded wait for the group to shrink back


def group_sizes(client: redis.Redis) -> dict[str, int]:
    return {key.decode(): client.zcard(key) for key in client.scan_iter(match="*:group:tenant.*")}


async def subscribed(url: str) -> websockets.ClientConnection:
    """A socket whose group membership is in place: the server answers a ping only after joining."""
    ws = await websockets.connect(url, open_timeout=60, max_queue=None)
    await ws.send(json.dumps({"type": "ping"}))
    while json.loads(await asyncio.wait_for(ws.recv(), timeout=60)).get("type") != "pong":
        pass
    return ws


class Churn:
    def __init__(self, stack: CaseStack, base: str, headers: dict[str, str], auth: str) -> None:
        self.stack, self.base, self.headers, self.auth = stack, base, headers, auth
        self.ws_base = base.replace("http://", "ws://") + "/ws"
        self.redis = redis.Redis.from_url(f"{stack.env['CASE_REDIS_URL']}/2")

    async def url(self, http: httpx.AsyncClient) -> str:
        if self.auth == "token":
            return f"{self.ws_base}?token={self.headers['Authorization'].split()[1]}"
        body = ok(await http.post("/ws/ticket", headers=self.headers))
        return f"{self.ws_base}?ticket={body['ticket']}"

    async def open_many(self, count: int) -> list[websockets.ClientConnection]:
        gate = asyncio.Semaphore(OPEN_AT_ONCE)
        # Idle connections are dropped before uvicorn's 5 s keep-alive timeout closes them under a
        # request (the server's close and the client's reuse otherwise race).
        limits = httpx.Limits(max_connections=OPEN_AT_ONCE, keepalive_expiry=2)
        async with httpx.AsyncClient(base_url=self.base, timeout=60, limits=limits) as http:

            async def one() -> websockets.ClientConnection:
                async with gate:
                    return await subscribed(await self.url(http))

            return await asyncio.gather(*(one() for _ in range(count)))

    async def settle(self, expected: int) -> tuple[int, float]:
        """(group size at the end, seconds until it reached `expected`, or the whole wait)."""
        start = time.monotonic()
        size = -1
        while time.monotonic() - start < SETTLE_SECONDS:
            size = sum(group_sizes(self.redis).values())
            if size == expected:
                break
            await asyncio.sleep(0.05)
        return size, time.monotonic() - start

    async def broadcast_reaches(
        self, live: websockets.ClientConnection, case_id: str, n: int
    ) -> float | None:
        """Seconds from the update's request to its message on the live socket; None if none came."""
        start = time.monotonic()
        async with httpx.AsyncClient(base_url=self.base, timeout=30) as http:
            ok(await http.patch(f"/cases/{case_id}/data", json={"data": {"round": n}}, headers=self.headers))
        deadline = start + 10
        while time.monotonic() < deadline:
            try:
                message = json.loads(await asyncio.wait_for(live.recv(), timeout=deadline - time.monotonic()))
            except TimeoutError:
                return None
            if message.get("type") == "case:updated" and message["data"].get("caseId") == case_id:
                return time.monotonic() - start
        return None


async def run(stack: CaseStack, base: str, args: argparse.Namespace) -> list[Figures]:
    headers = stack.login()
    case_type = stack.case_type(headers)
    with httpx.Client(base_url=base, timeout=30) as http:
        case_id = ok(
            http.post("/cases", json={"caseTypeId": case_type, "data": {"round": 0}}, headers=headers)
        )["id"]
    churn = Churn(stack, base, headers, args.auth)
    rows = []
    async with httpx.AsyncClient(base_url=base, timeout=30) as http:
        live = await subscribed(await churn.url(http))
    for n in range(1, args.rounds + 1):
        started = time.monotonic()
        try:
            sockets = await churn.open_many(args.sockets)
            opened = time.monotonic() - started
            at_peak = sum(group_sizes(churn.redis).values())
            closing = time.monotonic()
            await asyncio.gather(*(ws.close() for ws in sockets))
            closed = time.monotonic() - closing
            size, settle = await churn.settle(expected=1)
            latency = await churn.broadcast_reaches(live, case_id, n)
        except Exception as exc:  # a round that breaks is a figure too
            traceback.print_exc()
            rows.append(Figures(f"round {n}", {"error": f"{type(exc).__name__}: {exc}"[:120]}))
            continue
        rows.append(
            Figures(
                f"round {n}",
                {
                    "sockets": args.sockets,
                    "open (s)": f"{opened:.1f}",
                    "group at peak": at_peak,
                    "close all (s)": f"{closed:.1f}",
                    "group after": size,
                    "left behind": size - 1,
                    "settled in (s)": f"{settle:.2f}" if size == 1 else f">{SETTLE_SECONDS}",
                    "next broadcast": f"{latency * 1000:.0f} ms" if latency is not None else "lost",
                },
            )
        )
    await live.close()
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sockets", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--auth", choices=["ticket", "token"], default="ticket")
    args = parser.parse_args()
    token = new_token()
    with private_services() as (pg, redis_server):
        stack = CaseStack(pg, redis_server, token=token)
        stack.migrate()
        server, base = start_procfile_server("case-web", env=stack.env, health_path="/healthz")
        stack.base = base
        try:
            rows = asyncio.run(run(stack, base, args))
        finally:
            print(server.log_text()[-2000:], file=sys.stderr)  # the server's warnings, if any
            server.stop()
    print(f"({environment_note()})")
    print_table(rows)


if __name__ == "__main__":
    main()
