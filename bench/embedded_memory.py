"""Memory of the embedded default (`make run`): every process's RSS and PSS, idle and after load,
and a soak that repeats the load and samples memory, to show whether it grows.

    .venv/bin/python bench/embedded_memory.py                         # idle, load, after load
    .venv/bin/python bench/embedded_memory.py --soak-minutes 30       # plus a 30-minute soak

It starts `deploy/devserver.py` (exactly what `make run` starts) on free ports with its own var
folder (`var/embedded-memory-<pid>`, fresh SQLite databases and broker), waits for both webs, lets
it idle `--idle` seconds and reads every process of the tree from /proc: RSS (what `ps` shows; pages
a prefork child shares with its parent count in both) and PSS (shared pages divided among their
sharers: the column that adds up to what the machine gives). Load: `--creates` cases created through
the case API (each with its audit row, a workflow when the demo tenant binds one) and `--tasks` task
runs through the orchestrator API (`true`, run by the agent), waited for. The soak repeats that load
for `--soak-minutes` and prints a sample after each round; a growing total across rounds (after the
first few, which warm caches) is the leak to look for.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import uuid
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def tree(root: int) -> list[int]:
    """`root` and all its descendants (by the parent pid in /proc/<pid>/stat)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            ppid = int(stat.rsplit(")", 1)[1].split()[1])
            children.setdefault(ppid, []).append(int(entry.name))
    found, todo = [], [root]
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo.extend(children.get(pid, []))
    return found


def memory(pid: int) -> tuple[str, float, float] | None:
    """(command, RSS MB, PSS MB) of one process, or None once it is gone."""
    try:
        rollup = Path(f"/proc/{pid}/smaps_rollup").read_text()
        cmd = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return None
    values = {line.split(":")[0]: int(line.split()[1]) for line in rollup.splitlines()[1:] if ":" in line}
    return cmd.strip(), values.get("Rss", 0) / 1024, values.get("Pss", 0) / 1024


def label(cmd: str) -> str:
    for key, name in (("run_worker", "case-worker"), ("run_agent", "orch-agent"), ("casemgmt.config.asgi", "case-web"),
                      ("orchestrator.config.asgi", "orch-web"), ("devserver", "devserver"), ("reaper", "agent reaper")):  # fmt: skip
        if key in cmd:
            return name
    return cmd[:40]


def sample(root: int, title: str) -> tuple[float, float]:
    rows = [(pid, m) for pid in tree(root) if (m := memory(pid))]
    rss = sum(m[1] for _, m in rows)
    pss = sum(m[2] for _, m in rows)
    print(
        f"\n{title}: {len(rows)} processes, RSS {rss:.0f} MB, PSS {pss:.0f} MB (load {os.getloadavg()[0]:.1f})"
    )
    for pid, (cmd, r, p) in sorted(rows, key=lambda row: label(row[1][0])):
        print(f"  {label(cmd):14} pid {pid:7}  RSS {r:6.1f} MB  PSS {p:6.1f} MB")
    sys.stdout.flush()
    return rss, pss


def wait_up(url: str, seconds: float = 180) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            if httpx.get(url, timeout=2).status_code < 500:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.5)
    raise SystemExit(f"{url} did not come up")


def load(case: str, orch: str, token: str, case_type: str, creates: int, tasks: int) -> None:
    headers = {"Authorization": f"Bearer {token}"}
    with httpx.Client(base_url=case, headers=headers, timeout=30) as client:
        for n in range(creates):
            body = {"caseTypeId": case_type, "data": {}, "displayName": f"Soak {n}"}
            response = client.post("/cases", json=body)
            assert response.status_code == 201, response.text[:300]
    with httpx.Client(base_url=orch, timeout=30) as client:
        task_id = f"soak{uuid.uuid4().hex[:8]}"
        assert client.put(f"/api/tasks/{task_id}", json={"command": "true"}).status_code in (200, 201)
        runs = [
            client.post("/api/schedule-task", json={"task_id": task_id}).json()["run_id"]
            for _ in range(tasks)
        ]
        deadline = time.monotonic() + 600
        for run_id in runs:
            while client.get(f"/api/runs/{run_id}").json().get("status") not in (
                "completed",
                "failed",
                "cancelled",
            ):
                if time.monotonic() > deadline:
                    raise SystemExit(f"run {run_id} did not finish")
                time.sleep(0.2)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--idle", type=float, default=20)
    parser.add_argument("--creates", type=int, default=300)
    parser.add_argument("--tasks", type=int, default=100)
    parser.add_argument("--soak-minutes", type=float, default=0)
    args = parser.parse_args()
    var = ROOT / "var" / f"embedded-memory-{os.getpid()}"
    case_port, orch_port = free_port(), free_port()
    env = dict(os.environ, CASE_PORT=str(case_port), ORCH_PORT=str(orch_port),
               CASE_VAR_DIR=str(var / "case"), ORCH_VAR_DIR=str(var / "orch"))  # fmt: skip
    var.mkdir(parents=True)
    log = (var.parent / f"{var.name}.log").open("wb")  # the processes' output, kept after the run
    server = subprocess.Popen(
        [sys.executable, "deploy/devserver.py"], cwd=ROOT, env=env, start_new_session=True,
        stdout=log, stderr=subprocess.STDOUT,
    )  # fmt: skip
    try:
        case, orch = f"http://127.0.0.1:{case_port}", f"http://127.0.0.1:{orch_port}"
        wait_up(f"{case}/healthz")
        wait_up(f"{orch}/api/health")
        time.sleep(args.idle)
        sample(server.pid, "idle")
        credentials = json.loads((var / "case" / "demo-credentials.json").read_text())
        token = httpx.post(f"{case}/auth/login", json=credentials, timeout=30).json()["token"]
        registered = httpx.post(
            f"{case}/case-types", headers={"Authorization": f"Bearer {token}"}, timeout=30,
            json={"key": "soak_item", "displayName": "Soak item", "schema": {"type": "object"}},
        )  # fmt: skip
        assert registered.status_code == 201, registered.text[:300]
        case_type = registered.json()["id"]
        began = time.monotonic()
        load(case, orch, token, case_type, args.creates, args.tasks)
        print(f"\nload: {args.creates} creates, {args.tasks} task runs in {time.monotonic() - began:.0f} s")
        sample(server.pid, "after load")
        rounds, end = 0, time.monotonic() + args.soak_minutes * 60
        while time.monotonic() < end:
            load(case, orch, token, case_type, args.creates, args.tasks)
            rounds += 1
            sample(server.pid, f"soak round {rounds} ({(time.monotonic() - began) / 60:.1f} min)")
    finally:
        os.killpg(server.pid, signal.SIGINT)
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
        shutil.rmtree(var, ignore_errors=True)


if __name__ == "__main__":
    main()
