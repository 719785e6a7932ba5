"""Queue wait of the embedded default (`make run`): enqueue -> start latency of case service jobs.

Runs the case worker exactly as deploy/devserver.py starts it (filesystem broker, SQLite, beat
embedded) in a fresh var/ folder, enqueues a cheap real task (`casemgmt.ops.ping`, one file-cache
write) at a steady rate, and measures for every job the time from just before its enqueue to the
moment it started (its end less its run time, both in the worker's log). Then, unless
`--burst 0`, a burst of bulk jobs (welcome-email-like) is queued and one urgent job right behind
it, and that urgent job's wait is reported too.

    .venv/bin/python bench/embedded_queue.py [--rate 20] [--seconds 30] [--burst 110]

Prints the load average with the figures: on a shared machine they are only as good as the load.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "deploy"))

import devserver  # noqa: E402 - deploy/ is no package; the runner's own process table


def embedded_env(var_dir: Path) -> dict[str, str]:
    """The environment `make run` has: nothing pointing at PostgreSQL or Redis."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CASE_", "ORCH_", "DJANGO_", "TEST_"))}
    env.update(
        PYTHONPATH=str(ROOT),
        PYTHONUNBUFFERED="1",
        DJANGO_SETTINGS_MODULE="casemgmt.config.settings.local",
        CASE_VAR_DIR=str(var_dir),
    )
    return env


def setup_django(env: dict[str, str]) -> None:
    os.environ.update({k: env[k] for k in ("DJANGO_SETTINGS_MODULE", "CASE_VAR_DIR")})
    for key in [k for k in os.environ if k.startswith(("CASE_", "ORCH_")) and k != "CASE_VAR_DIR"]:
        del os.environ[key]
    import django

    django.setup()


# Celery's trace logs every task's end and run time: its start is the one minus the other.
SUCCEEDED = re.compile(
    r"^(\S+ \S+) INFO\s+celery\.app\.trace \S+ Task \S+\[([\w-]+)\] succeeded in ([\d.e-]+)s"
)


def starts(log: Path) -> dict[str, float]:
    """task id -> when it started (epoch seconds), from the worker's log lines."""
    found = {}
    for line in log.read_text(errors="replace").splitlines():
        if match := SUCCEEDED.match(line):
            ended = datetime.strptime(match[1], "%Y-%m-%d %H:%M:%S,%f").timestamp()  # local time, as logged
            found[match[2]] = ended - float(match[3])
    return found


def wait_for(queued: dict[str, float], log: Path, timeout: float) -> dict[str, float]:
    """task id -> its wait in seconds, once every job ran (or the timeout passed)."""
    deadline = time.monotonic() + timeout
    while True:
        started = starts(log)
        if all(task in started for task in queued) or time.monotonic() > deadline:
            return {task: started[task] - at for task, at in queued.items() if task in started}
        time.sleep(0.5)


def send(app, queue: str | None) -> tuple[str, float]:
    queued = time.time()
    result = app.send_task("casemgmt.ops.ping", args=["bench"], queue=queue)
    return result.id, queued


def steady(app, rate: float, seconds: float, queue: str | None) -> dict[str, float]:
    queued: dict[str, float] = {}
    start = time.monotonic()
    for index in range(int(rate * seconds)):
        pause = start + index / rate - time.monotonic()
        if pause > 0:
            time.sleep(pause)
        task, at = send(app, queue)
        queued[task] = at
    return queued


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def report(label: str, waits: dict[str, float], expected: int) -> None:
    values = list(waits.values())
    if not values:
        print(f"{label}: no job ran")
        return
    print(
        f"{label}: {len(values)}/{expected} ran; wait p50 {statistics.median(values):.3f}s "
        f"p95 {percentile(values, 0.95):.3f}s max {max(values):.3f}s"
    )


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rate", type=float, default=20.0)
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--burst", type=int, default=110, help="bulk jobs queued ahead of one urgent job")
    parser.add_argument("--bulk-queue", default=None, help="queue of the burst (default: the bulk jobs' own)")
    parser.add_argument("--urgent-queue", default=None, help="queue of the urgent job (default: erasure's)")
    args = parser.parse_args()
    sys.stdout.reconfigure(line_buffering=True)  # type: ignore[union-attr]

    var_dir = Path(tempfile.mkdtemp(prefix="embedded-queue-", dir=ROOT / "var"))
    env = embedded_env(var_dir)
    setup_django(env)
    from django.conf import settings

    from casemgmt.config.celery import app

    bulk_queue = args.bulk_queue or settings.ACCOUNTS_EMAIL_QUEUE
    urgent_queue = args.urgent_queue or settings.ERASURE_QUEUE
    subprocess.run(
        [sys.executable, "manage_case.py", "migrate", "--noinput", "-v", "0"], cwd=ROOT, env=env, check=True
    )
    command = devserver.process("case-worker")[1]
    log = open(var_dir / "worker.log", "wb")  # noqa: SIM115 - closed below
    worker = subprocess.Popen(
        command, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
    )
    try:
        log_path = var_dir / "worker.log"
        if not wait_for(dict([send(app, None)]), log_path, timeout=120):
            print("the worker did not start; see", var_dir / "worker.log")
            return 1
        load_before = os.getloadavg()
        print(f"worker: {' '.join(command[1:])}")
        print(f"machine: {os.cpu_count()} CPUs, load average before {load_before[0]:.2f} (1 min)")
        waits = wait_for(steady(app, args.rate, args.seconds, None), log_path, timeout=args.seconds * 20 + 60)
        report(f"steady {args.rate:g} jobs/s for {args.seconds:g}s", waits, int(args.rate * args.seconds))
        if args.burst:
            bulk = dict(send(app, bulk_queue) for _ in range(args.burst))
            urgent = dict([send(app, urgent_queue)])
            bulk_waits = wait_for({**bulk, **urgent}, log_path, timeout=args.burst * 2 + 60)
            urgent_wait = {task: bulk_waits.pop(task) for task in urgent if task in bulk_waits}
            report(f"burst of {args.burst} on {bulk_queue}", bulk_waits, args.burst)
            report(f"urgent job on {urgent_queue} queued behind the burst", urgent_wait, 1)
        print(f"load average after {os.getloadavg()[0]:.2f} (1 min)")
    finally:
        os.killpg(worker.pid, signal.SIGTERM)
        try:
            worker.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(worker.pid, signal.SIGKILL)
        log.close()
    shutil.rmtree(var_dir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
