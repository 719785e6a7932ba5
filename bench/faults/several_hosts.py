"""Three agents on three "hosts" (Linux network namespaces) drain one queue; one host's link is cut.

    python bench/faults/several_hosts.py [--task-runs 3000] [--hosts 3] [--no-cut]

Needs root (`ip netns`, veth pairs). Each host is a namespace with its own address, joined to the
machine by a veth pair 10.X.i.2 <-> 10.X.i.1; the private PostgreSQL and redis-server listen on
every 10.X.i.1, so an agent reaches them only over its own link. The agent runs under
`ip netns exec`. All task runs (DAG runs of 50 independent tasks, commands that append
`<task run id> <attempt> start|done` to one file) are queued on one queue. Once a third of them
finished and host 1 holds a running task run, host 1's link is cut (`ip link set <host side>
down`): its agent stays alive but unreachable, like a host that dropped off the network. The others' sweep declares it dead after
its heartbeat goes stale and retries its task runs. When the queue is drained the link comes back;
the cut agent reconnects, and its late results must change nothing. Figures as agent_kills.py.
"""

from __future__ import annotations

import argparse
import random
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import psycopg

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from bench.faults.agent_kills import DAG_SIZE, define, judge, schedule, task_runs, unfinished  # noqa: E402
from bench.faults.harness import (  # noqa: E402
    Figures,
    OrchStack,
    elapsed,
    environment_note,
    evidence_file,
    new_token,
    print_table,
    private_services,
)
from tests.support.processes import wait_for  # noqa: E402


@dataclass
class Host:
    namespace: str
    host_link: str  # the veth end on the machine's side; down = the host is cut off
    address: str  # the machine's address on this link, where PostgreSQL and Redis listen


def ip(*args: str) -> None:
    subprocess.run(["ip", *args], check=True, capture_output=True)


def namespaces_permitted() -> str | None:
    """None when `ip netns add` works here, else why not."""
    probe = f"fltprobe{random.randrange(10**6)}"
    try:
        ip("netns", "add", probe)
    except (OSError, subprocess.CalledProcessError) as exc:
        return f"network namespaces unavailable: {getattr(exc, 'stderr', b'') or exc!s}"
    ip("netns", "del", probe)
    return None


@contextmanager
def hosts(count: int, token: str) -> Iterator[list[Host]]:
    subnet = 200 + random.randrange(50)
    made: list[Host] = []
    try:
        for i in range(1, count + 1):
            host = Host(f"flt-{token}-{i}", f"fh{token[:6]}{i}", f"10.{subnet}.{i}.1")
            inside = f"fn{token[:6]}{i}"
            ip("netns", "add", host.namespace)
            made.append(host)
            ip("link", "add", host.host_link, "type", "veth", "peer", "name", inside)
            ip("link", "set", inside, "netns", host.namespace)
            ip("addr", "add", f"{host.address}/24", "dev", host.host_link)
            ip("link", "set", host.host_link, "up")
            ip("-n", host.namespace, "addr", "add", f"10.{subnet}.{i}.2/24", "dev", inside)
            ip("-n", host.namespace, "link", "set", inside, "up")
            ip("-n", host.namespace, "link", "set", "lo", "up")
        yield made
    finally:
        for host in made:
            subprocess.run(["ip", "link", "del", host.host_link], capture_output=True)
            subprocess.run(["ip", "netns", "del", host.namespace], capture_output=True)


def finished(database_url: str) -> int:
    with psycopg.connect(database_url) as conn:
        row = conn.execute("SELECT count(*) FROM orch_runs_taskrun WHERE status = 'completed'").fetchone()
    return int(row[0]) if row else 0


def held_by(database_url: str, name: str) -> int:
    with psycopg.connect(database_url) as conn:
        row = conn.execute(
            "SELECT count(*) FROM orch_runs_taskrun WHERE status = 'running' AND agent_id LIKE %s",
            (f"{name}@%",),
        ).fetchone()
    return int(row[0]) if row else 0


def heartbeat_after(database_url: str, name: str, moment: float) -> bool:
    """The agent wrote a heartbeat after `moment` (epoch seconds): it reaches the database again."""
    with psycopg.connect(database_url) as conn:
        row = conn.execute(
            "SELECT max(extract(epoch FROM last_heartbeat)) FROM orch_agents_agent WHERE agent_id LIKE %s",
            (f"{name}@%",),
        ).fetchone()
    return bool(row and row[0] and float(row[0]) > moment)


def run(
    *, task_runs_total: int = 3000, host_count: int = 3, cut: bool = True, timeout: float = 1800
) -> Figures:
    started = time.monotonic()
    token = new_token()
    runs = max(1, task_runs_total // DAG_SIZE)
    size = min(DAG_SIZE, task_runs_total)
    log = evidence_file()
    with hosts(host_count, token) as machines:
        listen = ("127.0.0.1", *(h.address for h in machines))
        with private_services(listen) as (pg, redis):
            stack = OrchStack(pg, redis, token=token)
            try:
                stack.migrate()
                stack.start_api()
                queue = f"hosts-{token}"
                # Commands last 0 to 0.4 s, so a host is caught holding task runs when its link is cut.
                _, server_errors = schedule(stack, define(stack, queue, log, size), runs, 10)
                for i, host in enumerate(machines, 1):
                    db = stack.database_url.replace("127.0.0.1", host.address)
                    env = {
                        "ORCH_DATABASE_URL": db,
                        "ORCH_REDIS_URL": redis.url.replace("127.0.0.1", host.address),
                    }
                    stack.start_agent(
                        f"host{i}", queue, env=env, wrapper=["ip", "netns", "exec", host.namespace]
                    )
                cut_at, held = None, 0
                deadline = time.monotonic() + timeout
                while unfinished(stack.database_url) and time.monotonic() < deadline:
                    if (cut and cut_at is None and finished(stack.database_url) >= runs * size // 3
                            and held_by(stack.database_url, "host1")):  # fmt: skip
                        ip("link", "set", machines[0].host_link, "down")
                        cut_at = time.time()
                        # Counted a second after the cut, once what was already on the wire has
                        # landed: from then on the cut host changes nothing.
                        time.sleep(1)
                        held = held_by(stack.database_url, "host1")
                        if not held:  # it finished its last one just before the cut: try again
                            ip("link", "set", machines[0].host_link, "up")
                            cut_at = None
                    time.sleep(0.2)
                if cut_at is not None:
                    ip("link", "set", machines[0].host_link, "up")
                    restored = time.time()
                    wait_for(lambda: heartbeat_after(stack.database_url, "host1", restored), timeout=120,
                             interval=0.5, what="the cut host's agent to reach the database again")  # fmt: skip
                alive = sum(1 for proc in stack.agents.values() if proc.alive())
                figures = judge(task_runs(stack.database_url), log, runs * size)
            finally:
                stack.stop()
                shutil.rmtree(log.parent, ignore_errors=True)
    return Figures(
        "several hosts" + (", one link cut" if cut else ""),
        {"hosts": host_count, "links cut": int(cut_at is not None), "held by the cut host": held, **figures, "agents alive at end": alive,
         "API 5xx": server_errors, "time": elapsed(started)},
    )  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--task-runs", type=int, default=3000)
    parser.add_argument("--hosts", type=int, default=3)
    parser.add_argument("--no-cut", action="store_true")
    args = parser.parse_args()
    reason = namespaces_permitted()
    if reason:
        sys.exit(reason)
    figures = run(task_runs_total=args.task_runs, host_count=args.hosts, cut=not args.no_cut)
    print(f"({environment_note()})")
    print_table([figures])


if __name__ == "__main__":
    main()
