"""`make run`: both services on the embedded default (SQLite, filesystem broker), in the foreground.

Starts the case service on :8000 and the orchestrator on :3000 (daphne), a Celery worker for each
(with beat embedded, for periodic jobs), prefixes every output line with its process name, and stops
everything on Ctrl-C.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PY = sys.executable
CASE_PORT = os.environ.get("CASE_PORT", "8000")
ORCH_PORT = os.environ.get("ORCH_PORT", "3000")

ENV = dict(os.environ, PYTHONUNBUFFERED="1")
CASE_ENV = dict(ENV, DJANGO_SETTINGS_MODULE=os.environ.get("CASE_SETTINGS", "casemgmt.config.settings.local"))
ORCH_ENV = dict(
    ENV, DJANGO_SETTINGS_MODULE=os.environ.get("ORCH_SETTINGS", "orchestrator.config.settings.local")
)

PROCESSES = [
    ("case-web", CASE_ENV, [PY, "-m", "daphne", "-b", "0.0.0.0", "-p", CASE_PORT, "casemgmt.config.asgi:application"]),
    ("case-worker", CASE_ENV, [PY, "manage_case.py", "run_worker", "--queues", "case.default", "--beat"]),
    ("orch-web", ORCH_ENV, [PY, "-m", "daphne", "-b", "0.0.0.0", "-p", ORCH_PORT, "orchestrator.config.asgi:application"]),
    ("orch-worker", ORCH_ENV, [PY, "manage_orch.py", "run_agent", "--queues", "default", "--beat"]),
]  # fmt: skip


def setup() -> None:
    for env, manage in ((CASE_ENV, "manage_case.py"), (ORCH_ENV, "manage_orch.py")):
        subprocess.run([PY, manage, "migrate", "--noinput", "-v", "0"], cwd=ROOT, env=env, check=True)
    subprocess.run(
        [PY, "manage_case.py", "ensure_demo_tenant", "--base-url", f"http://localhost:{CASE_PORT}"],
        cwd=ROOT,
        env=CASE_ENV,
        check=True,
    )
    subprocess.run(
        [
            PY,
            "manage_orch.py",
            "ensure_console_admin",
            "--demo-dag",
            "--base-url",
            f"http://localhost:{ORCH_PORT}",
        ],
        cwd=ROOT,
        env=ORCH_ENV,
        check=True,
    )
    print(
        f"Console:       http://localhost:{CASE_PORT}/console/   (sign in with the case service login above)\n"
        f"Orchestrator:  http://localhost:{ORCH_PORT}/console/   (sign in with the orchestrator login above;\n"
        f"               its API is open in the embedded default: http://localhost:{ORCH_PORT}/api/status)\n"
    )


def pump(name: str, stream) -> None:
    for line in iter(stream.readline, b""):
        sys.stdout.write(f"{name:<12}| {line.decode(errors='replace')}")
        sys.stdout.flush()


def main() -> int:
    setup()
    children: list[subprocess.Popen] = []
    for name, env, args in PROCESSES:
        proc = subprocess.Popen(
            args, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True
        )
        children.append(proc)
        threading.Thread(target=pump, args=(name, proc.stdout), daemon=True).start()

    stopping = False

    def stop(*_: object) -> None:
        nonlocal stopping
        stopping = True

    signal.signal(signal.SIGINT, stop)
    signal.signal(signal.SIGTERM, stop)
    while not stopping and all(p.poll() is None for p in children):
        time.sleep(0.3)
    for proc in children:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
    deadline = time.monotonic() + 10
    for proc in children:
        try:
            proc.wait(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
    return 0


if __name__ == "__main__":
    sys.exit(main())
