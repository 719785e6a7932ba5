"""Memory of the production processes: every deploy/Procfile process's RSS and PSS idle, after
`--load-minutes` of paced load, and over a soak of the same load sampled every minute.

    .venv/bin/python bench/procfile_memory.py                        # idle, 5 minutes of load
    .venv/bin/python bench/procfile_memory.py --soak-minutes 30      # then a 30-minute soak

Each Procfile line but `release` is started as a process manager starts it (`/bin/sh -c <line>`,
its own process group), with the production settings of its service given through the environment:
case-web's literal `--port 8000` becomes `--port $PORT` (as bench/case_floor.sh does), orch-web reads
`ORCH_PORT`; both on free ports. The databases (`--case-database-url`, `--orch-database-url`) are
dropped, created and migrated with the `release` line's commands, one per service as
deploy/compose.yaml runs them; Redis is `--redis-url` with every key and queue under a prefix of this
run's own (`TEST_RUN_TOKEN`), removed at the end. Setup, before the processes start: a tenant
(`create_tenant`) and an orchestrator API key (`create_api_key`); once they are up, after the idle
sample: a login, a case type and a task (`true`).

Load: `--creates-per-second` cases created through the case API and `--tasks-per-second` task runs
scheduled through the orchestrator API (run by orch-agent), each request at its slot in the second
from a few client threads; every minute the bench waits for the minute's runs to end, then samples.
Memory is read from /proc (bench/embedded_memory.py): RSS, and PSS (shared pages divided among their
sharers: what adds up). The soak prints each process's growth from its first sample (the load of
the first phase being the warm-up) to its last; the processes' output is kept in
var/procfile-memory-<pid>/.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import subprocess
import sys
import time
from collections import deque
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

import httpx
import psycopg
import redis
from embedded_memory import (
    Row,
    create_case,
    define_task,
    free_port,
    sample,
    schedule_run,
    wait_runs,
    wait_up,
)

ROOT = Path(__file__).resolve().parents[1]
PASSWORD = "Procfile-memory-passw0rd-not-secret!"
EMAIL = "memory@bench.test"
# Secrets of the benchmark's own: production settings refuse to start without them.
SECRETS = {
    "SECRET_KEY": "procfile-memory-secret-key-not-for-production-0123456789",
    "FIELD_ENCRYPTION_KEYS": "dGVzdC1vbmx5LWZlcm5ldC1rZXktMzItYnl0ZXMtISE=",
    "AUDIT_SIGNING_KEYS": "bench:YmVuY2gtb25seS1hdWRpdC1zaWduaW5nLXNlZWQtMzI=",  # Ed25519 seed, bench only
    "ALLOWED_HOSTS": "127.0.0.1,localhost",
    "SECURE_COOKIES": "false",
}


def procfile() -> dict[str, str]:
    lines = (ROOT / "deploy" / "Procfile").read_text().splitlines()
    return dict(line.split(": ", 1) for line in lines if line.strip() and not line.startswith("#"))


def service_env(service: str, args: argparse.Namespace, prefix: str) -> dict[str, str]:
    """The environment a deployment gives the `case` or `orch` processes."""
    upper = service.upper()
    module = "casemgmt" if service == "case" else "orchestrator"
    return {
        **os.environ,
        "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}",  # uvicorn, celery, python
        "DJANGO_SETTINGS_MODULE": f"{module}.config.settings.production",
        f"{upper}_DATABASE_URL": getattr(args, f"{service}_database_url"),
        f"{upper}_REDIS_URL": args.redis_url,
        f"{upper}_VAR_DIR": str(args.var / service),
        "TEST_RUN_TOKEN": prefix,
        **{f"{upper}_{key}": value for key, value in SECRETS.items()},
    }


def recreate_database(url: str) -> None:
    base, name = url.rsplit("/", 1)
    with psycopg.connect(f"{base}/postgres", autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{name}"')


def manage(service: str, env: dict[str, str], *argv: str) -> str:
    command = [sys.executable, f"manage_{service}.py", *argv]
    return subprocess.run(command, cwd=ROOT, env=env, check=True, capture_output=True, text=True).stdout


def release(envs: dict[str, dict[str, str]]) -> str:
    """Migrates both databases with the release line's commands; creates the tenant and the API key."""
    line = procfile()["release"]
    for service in ("case", "orch"):
        command = f"python manage_{service}.py migrate --noinput"
        assert command in line, f"deploy/Procfile's release line no longer runs {command!r}"
        subprocess.run(["/bin/sh", "-c", command], cwd=ROOT, env=envs[service], check=True)
    manage("case", envs["case"], "create_tenant", "--name", "Memory", "--admin-email", EMAIL,
           "--admin-password", PASSWORD)  # fmt: skip
    return manage(
        "orch", envs["orch"], "create_api_key", "--name", "procfile-memory", "--role", "admin"
    ).strip()


def start(envs: dict[str, dict[str, str]], var: Path) -> tuple[dict[str, subprocess.Popen], str, str]:
    """Every Procfile process but `release`; returns them and the two webs' base URLs."""
    case_port, orch_port = free_port(), free_port()
    procs = {}
    for name, line in procfile().items():
        if name == "release":
            continue
        env = dict(envs["case" if name.startswith("case") else "orch"], PORT=str(case_port),
                   ORCH_PORT=str(orch_port))  # fmt: skip
        if name == "case-web":
            assert "--port 8000" in line, "deploy/Procfile's case-web line has no '--port 8000'"
            line = line.replace("--port 8000", "--port $PORT")
        log = (var / f"{name}.log").open("wb")
        procs[name] = subprocess.Popen(["/bin/sh", "-c", line], cwd=ROOT, env=env, stdout=log,
                                       stderr=subprocess.STDOUT, start_new_session=True)  # fmt: skip
    case, orch = f"http://127.0.0.1:{case_port}", f"http://127.0.0.1:{orch_port}"
    wait_up(f"{case}/healthz")
    wait_up(f"{orch}/api/health")
    for name in ("case-worker", "orch-agent"):
        deadline = time.monotonic() + 180
        while "ready." not in (var / f"{name}.log").read_text(errors="replace"):
            if time.monotonic() > deadline or procs[name].poll() is not None:
                raise SystemExit(f"{name} did not come up: see {var / name}.log")
            time.sleep(0.5)
    for name, proc in procs.items():
        assert proc.poll() is None, f"{name} exited: see {var / name}.log"
    return procs, case, orch


def stop(procs: dict[str, subprocess.Popen]) -> None:
    for proc in procs.values():
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
    for proc in procs.values():
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)


class PacedLoad:
    """Creates and task runs at fixed rates, each request at its slot in the second; a client that
    falls behind catches up (at most `inflight` requests at once) and the achieved rates are printed."""

    def __init__(self, case: httpx.Client, orch: httpx.Client, case_type: str, task_id: str,
                 creates: int, tasks: int, threads: int = 8) -> None:  # fmt: skip
        self.case, self.orch, self.case_type, self.task_id = case, orch, case_type, task_id
        slots = [(k / creates, "create") for k in range(creates)]
        slots += [((k + 0.5) / tasks, "task") for k in range(tasks)]
        self.slots = sorted(slots)
        self.pool = ThreadPoolExecutor(threads)
        self.inflight = threads * 4
        self.created = 0
        self.ran = 0

    def run(self, seconds: float) -> None:
        began = time.monotonic()
        pending: deque[tuple[str, Future]] = deque()
        runs: list[str] = []
        for second in range(round(seconds)):
            for offset, kind in self.slots:
                delay = began + second + offset - time.monotonic()
                if delay > 0:
                    time.sleep(delay)
                while len(pending) >= self.inflight:
                    self._collect(pending.popleft(), runs)
                if kind == "create":
                    self.created += 1
                    pending.append(
                        (kind, self.pool.submit(create_case, self.case, self.case_type, self.created))
                    )
                else:
                    pending.append((kind, self.pool.submit(schedule_run, self.orch, self.task_id)))
        while pending:
            self._collect(pending.popleft(), runs)
        wait_runs(self.orch, runs)
        self.ran += len(runs)
        took = time.monotonic() - began
        print(f"  load: {self.created} creates, {self.ran} task runs so far; this minute took {took:.1f} s")

    @staticmethod
    def _collect(item: tuple[str, Future], runs: list[str]) -> None:
        kind, future = item
        result = future.result()
        if kind == "task":
            runs.append(result)


def growth(first: list[Row], last: list[Row]) -> None:
    before = {row[0]: row for row in first}
    print("\ngrowth from the first soak sample to the last (MB):")
    print(
        f"  {'process':32} {'RSS first':>10} {'RSS last':>10} {'RSS +':>8} {'PSS first':>10} {'PSS last':>10} {'PSS +':>8}"
    )
    totals = [0.0, 0.0, 0.0, 0.0]
    for key, _, rss, pss in last:
        if key not in before:
            print(f"  {key:32} (not in the first sample)")
            continue
        _, _, rss0, pss0 = before[key]
        totals = [totals[0] + rss0, totals[1] + rss, totals[2] + pss0, totals[3] + pss]
        print(
            f"  {key:32} {rss0:10.1f} {rss:10.1f} {rss - rss0:+8.1f} {pss0:10.1f} {pss:10.1f} {pss - pss0:+8.1f}"
        )
    r0, r1, p0, p1 = totals
    print(f"  {'total':32} {r0:10.1f} {r1:10.1f} {r1 - r0:+8.1f} {p0:10.1f} {p1:10.1f} {p1 - p0:+8.1f}")


def per_minute(names: list[str], soak: list[list[Row]]) -> None:
    """RSS of each Procfile entry (all its processes) per soak minute, and the totals."""
    print("\nsoak, RSS per Procfile entry (MB):")
    print("  min " + "".join(f"{name:>12}" for name in names) + f"{'RSS':>9}{'PSS':>9}")
    for minute, rows in enumerate(soak, 1):
        entries = [sum(row[2] for row in rows if row[0].startswith(name)) for name in names]
        totals = sum(row[2] for row in rows), sum(row[3] for row in rows)
        print(
            f"  {minute:3} " + "".join(f"{mb:12.1f}" for mb in entries) + f"{totals[0]:9.1f}{totals[1]:9.1f}"
        )


def drop_keys(redis_url: str, prefix: str) -> None:
    for db in range(5):  # case: 0-2, orchestrator: 3-4 (docs/configuration.md)
        client = redis.Redis.from_url(f"{redis_url}/{db}")
        keys = list(client.scan_iter(match=f"*{prefix}:*", count=1000))
        if keys:
            client.delete(*keys)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    pg = "postgres://postgres@127.0.0.1:5432"
    parser.add_argument(
        "--case-database-url", default=f"{pg}/case_procfile_memory", help="dropped and recreated"
    )
    parser.add_argument(
        "--orch-database-url", default=f"{pg}/orch_procfile_memory", help="dropped and recreated"
    )
    parser.add_argument("--redis-url", default="redis://127.0.0.1:6379")
    parser.add_argument("--idle", type=float, default=30, help="seconds between start and the idle sample")
    parser.add_argument("--load-minutes", type=int, default=5)
    parser.add_argument("--creates-per-second", type=int, default=20)
    parser.add_argument("--tasks-per-second", type=int, default=5)
    parser.add_argument("--soak-minutes", type=int, default=0)
    args = parser.parse_args()
    # A stop by SIGTERM (or SIGINT, which a shell's `&` ignores) still stops the processes started.
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda signum, _: sys.exit(128 + signum))
    args.var = ROOT / "var" / f"procfile-memory-{os.getpid()}"
    args.var.mkdir(parents=True)
    prefix = f"procfilememory{os.getpid()}"
    envs = {service: service_env(service, args, prefix) for service in ("case", "orch")}
    for url in (args.case_database_url, args.orch_database_url):
        recreate_database(url)
    api_key = release(envs)
    procs: dict[str, subprocess.Popen] = {}
    try:
        procs, case, orch = start(envs, args.var)
        roots = {name: proc.pid for name, proc in procs.items()}
        time.sleep(args.idle)
        sample(roots, "idle")
        token = httpx.post(f"{case}/auth/login", json={"email": EMAIL, "password": PASSWORD}, timeout=30)
        case_client = httpx.Client(base_url=case, timeout=30,
                                   headers={"Authorization": f"Bearer {token.json()['token']}"})  # fmt: skip
        orch_client = httpx.Client(base_url=orch, timeout=30, headers={"X-API-Key": api_key})
        registered = case_client.post(
            "/case-types", json={"key": "soak_item", "displayName": "Soak item", "schema": {"type": "object"}}
        )
        assert registered.status_code == 201, registered.text[:300]
        load = PacedLoad(case_client, orch_client, registered.json()["id"], define_task(orch_client),
                         args.creates_per_second, args.tasks_per_second)  # fmt: skip
        began = time.monotonic()
        for _ in range(args.load_minutes):
            load.run(60)
        sample(
            roots, f"after {args.load_minutes} minutes of load ({(time.monotonic() - began) / 60:.1f} min)"
        )
        soak: list[list[Row]] = []
        for minute in range(args.soak_minutes):
            if minute and minute % 20 == 0:  # access tokens live an hour (CASE_JWT_LIFETIME_SECONDS)
                login = httpx.post(
                    f"{case}/auth/login", json={"email": EMAIL, "password": PASSWORD}, timeout=30
                )
                case_client.headers["Authorization"] = f"Bearer {login.json()['token']}"
            load.run(60)
            soak.append(
                sample(roots, f"soak minute {minute + 1} ({(time.monotonic() - began) / 60:.1f} min)")
            )
        if soak:
            per_minute(list(roots), soak)
            growth(soak[0], soak[-1])
        for name, proc in procs.items():
            assert proc.poll() is None, f"{name} exited during the run: see {args.var / name}.log"
    finally:
        stop(procs)
        drop_keys(args.redis_url, prefix)


if __name__ == "__main__":
    main()
