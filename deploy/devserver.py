"""`make run`: both services on the embedded default (SQLite, filesystem broker), in the foreground.

Starts the production processes of deploy/Procfile, with the commands read from it so the two
cannot drift: the case web (uvicorn) on :8000, the orchestrator web (uvicorn) on
:3000, the case worker and an orchestrator agent, each with beat embedded for periodic jobs.
`EMBEDDED` lists the only changes made to a Procfile command. Every output line is prefixed with
its process name, and Ctrl-C stops everything.
"""

from __future__ import annotations

import os
import re
import shlex
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PROCFILE = ROOT / "deploy" / "Procfile"
PY = sys.executable
CASE_PORT = os.environ.get("CASE_PORT", "8000")
ORCH_PORT = os.environ.get("ORCH_PORT", "3000")
# A development server listens on this machine only; CASE_HOST / ORCH_HOST=0.0.0.0 open it to the network.
HOST = os.environ.get("CASE_HOST", "127.0.0.1")
ORCH_HOST = os.environ.get("ORCH_HOST", "127.0.0.1")
# The address links in emails (the welcome email's set-password link) point at: where this
# `make run` serves, unless CASE_PUBLIC_BASE_URL says otherwise.
PUBLIC_HOST = "localhost" if HOST in ("127.0.0.1", "0.0.0.0", "::", "::1") else HOST
CASE_PUBLIC_BASE_URL = os.environ.get("CASE_PUBLIC_BASE_URL") or f"http://{PUBLIC_HOST}:{CASE_PORT}"

ENV = dict(os.environ, PYTHONUNBUFFERED="1")
CASE_ENV = dict(
    ENV,
    DJANGO_SETTINGS_MODULE=os.environ.get("CASE_SETTINGS", "casemgmt.config.settings.local"),
    CASE_PUBLIC_BASE_URL=CASE_PUBLIC_BASE_URL,
)
ORCH_ENV = dict(
    ENV, DJANGO_SETTINGS_MODULE=os.environ.get("ORCH_SETTINGS", "orchestrator.config.settings.local")
)

# Procfile process -> (options whose value changes, arguments added). One case web worker: the
# embedded default's channel layer lives in the process's memory, so WebSocket groups only reach
# the clients of the process that sends. Beat runs inside the workers: no process of its own. The
# case worker also consumes the bulk queue (outbound mail, casemgmt.config.settings.local), taking
# from each queue in turn. Memory: the worker and the agent run their two slots as threads of one
# process (`--pool threads`) and beat as a thread (`--beat`, shared.worker): four processes instead of
# the Procfile's eleven, ~1.15 GB of RSS down to about half (docs/benchmarks.md, "Embedded default:
# memory"); their tasks wait on SQLite, the broker's files and commands, not on Python's CPU.
CASE_QUEUES = "case.default,case.bulk"
EMBEDDED: dict[str, tuple[dict[str, str], list[str]]] = {
    "case-web": ({"--host": HOST, "--port": CASE_PORT, "--workers": "1"}, []),
    "case-worker": ({"--queues": CASE_QUEUES}, ["--beat", "--pool", "threads"]),
    "orch-web": ({"--host": ORCH_HOST, "--port": ORCH_PORT}, []),
    "orch-agent": ({}, ["--beat", "--pool", "threads"]),
}
# Programs the Procfile names, run with this interpreter (`make run` needs no PATH set up).
MODULES = {"python": [PY], "uvicorn": [PY, "-m", "uvicorn"], "celery": [PY, "-m", "celery"]}


def procfile() -> dict[str, str]:
    lines = PROCFILE.read_text().splitlines()
    entries = (line.split(":", 1) for line in lines if line.strip() and not line.startswith("#"))
    return {name.strip(): command.strip() for name, command in entries}


def command(line: str, env: dict[str, str]) -> tuple[dict[str, str], list[str]]:
    """A Procfile line as (its environment assignments, its arguments), with the shell's
    `${NAME:-default}` taken from `env` as the shell would."""
    line = re.sub(r"\$\{(\w+):-([^}]*)\}", lambda m: env.get(m[1]) or m[2], line)
    words = shlex.split(line)
    assigned = {}
    while words and re.fullmatch(r"[A-Z_][A-Z0-9_]*=.*", words[0]):
        name, _, value = words.pop(0).partition("=")
        assigned[name] = value
    return assigned, MODULES.get(words[0], words[:1]) + words[1:]


def process(name: str) -> tuple[dict[str, str], list[str]]:
    """(environment, arguments) of one Procfile process as `make run` starts it."""
    base = CASE_ENV if name.startswith("case-") else ORCH_ENV
    assigned, args = command(procfile()[name], base)
    changed, added = EMBEDDED[name]
    for option, value in changed.items():
        if option not in args:  # the Procfile changed shape: say so rather than run something else
            raise SystemExit(f"deploy/Procfile's {name} has no {option}; update deploy/devserver.py")
        args[args.index(option) + 1] = value
    return dict(base, **assigned), args + added


def setup() -> None:
    for env, manage in ((CASE_ENV, "manage_case.py"), (ORCH_ENV, "manage_orch.py")):
        subprocess.run([PY, manage, "migrate", "--noinput", "-v", "0"], cwd=ROOT, env=env, check=True)
    subprocess.run(
        [PY, "manage_case.py", "ensure_demo_tenant", "--base-url", CASE_PUBLIC_BASE_URL],
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
        f"Console:       {CASE_PUBLIC_BASE_URL}/console/   (sign in with the case service login above)\n"
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
    for name in EMBEDDED:
        env, args = process(name)
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
