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


def parent_of(pid: int) -> int:
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
    except OSError:
        return 0


def tree(root: int) -> list[int]:
    """`root` and all its descendants, each after its parent (by the parent pid in /proc/<pid>/stat)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            children.setdefault(parent_of(int(entry.name)), []).append(int(entry.name))
    found, todo = [], [root]
    while todo:
        pid = todo.pop(0)
        found.append(pid)
        todo.extend(sorted(children.get(pid, [])))
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


KNOWN = (("run_worker", "case-worker"), ("run_agent", "orch-agent"), ("casemgmt.config.asgi", "case-web"),
         ("orchestrator.config.asgi", "orch-web"), ("devserver", "devserver"), ("reaper", "agent reaper"),
         ("beat", "case-beat"), ("resource_tracker", "resource tracker"),
         ("multiprocessing.spawn", "uvicorn worker"))  # fmt: skip


def label(cmd: str) -> str:
    for key, name in KNOWN:
        if key in cmd:
            return name
    return cmd[:40]


Row = tuple[str, int, float, float]  # (key: role and ordinal, pid, RSS MB, PSS MB)


SERVICES = {"case-web", "case-worker", "case-beat", "orch-web", "orch-agent", "devserver"}


def role(name: str, pid: int, root: int, cmd: str, parent: str) -> str:
    """A process's role: the tree's name for its root (`<name> sh` when a shell runs the command),
    else what its command line says, `child` added for a fork with its parent's command line (a
    prefork pool's process), and the tree's name before a helper's role (`case-web: uvicorn worker`)."""
    if pid == root:
        return f"{name} sh" if cmd.startswith("/bin/sh") else name
    own = label(cmd)
    if parent.removeprefix(f"{name}: ").removesuffix(" child") == own:
        own = f"{own} child"
    return own if own.removesuffix(" child") in SERVICES else f"{name}: {own}"


def snapshot(roots: dict[str, int]) -> list[Row]:
    """Every process of each named tree, keyed by role plus an ordinal among processes of that role
    (in pid order), so samples taken minutes apart line up even if a child was replaced."""
    named = []
    for name, root in roots.items():
        roles: dict[int, str] = {}
        for pid in tree(root):  # parents before their children
            if m := memory(pid):
                parent = roles.get(parent_of(pid), "")
                roles[pid] = role(name, pid, root, m[0], parent)
                named.append((roles[pid], pid, m[1], m[2]))
    named.sort(key=lambda row: (row[0], row[1]))
    rows, seen = [], dict.fromkeys((row[0] for row in named), 0)
    for key, pid, rss, pss in named:
        seen[key] += 1
        rows.append((key if seen[key] == 1 else f"{key} #{seen[key]}", pid, rss, pss))
    return rows


def sample(roots: dict[str, int], title: str) -> list[Row]:
    rows = snapshot(roots)
    rss = sum(row[2] for row in rows)
    pss = sum(row[3] for row in rows)
    print(
        f"\n{title}: {len(rows)} processes, RSS {rss:.0f} MB, PSS {pss:.0f} MB (load {os.getloadavg()[0]:.1f})"
    )
    for key, pid, r, p in rows:
        print(f"  {key:32} pid {pid:7}  RSS {r:6.1f} MB  PSS {p:6.1f} MB")
    sys.stdout.flush()
    return rows


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


def create_case(client: httpx.Client, case_type: str, n: int) -> None:
    body = {"caseTypeId": case_type, "data": {}, "displayName": f"Soak {n}"}
    response = client.post("/cases", json=body)
    assert response.status_code == 201, response.text[:300]


def define_task(client: httpx.Client) -> str:
    """A task running `true` on the agents' default queue."""
    task_id = f"soak{uuid.uuid4().hex[:8]}"
    response = client.put(f"/api/tasks/{task_id}", json={"command": "true"})
    assert response.status_code in (200, 201), response.text[:300]
    return task_id


def schedule_run(client: httpx.Client, task_id: str) -> str:
    response = client.post("/api/schedule-task", json={"task_id": task_id})
    assert response.status_code in (200, 201), response.text[:300]
    return response.json()["run_id"]


def wait_runs(client: httpx.Client, runs: list[str], seconds: float = 600) -> None:
    """Waits for every run to end; a run that failed or was cancelled stops the bench."""
    deadline = time.monotonic() + seconds
    for run_id in runs:
        while (status := client.get(f"/api/runs/{run_id}").json().get("status")) not in (
            "completed",
            "failed",
            "cancelled",
        ):
            if time.monotonic() > deadline:
                raise SystemExit(f"run {run_id} did not finish")
            time.sleep(0.2)
        assert status == "completed", f"run {run_id}: {status}"


def load(case: str, orch: str, token: str, case_type: str, creates: int, tasks: int) -> None:
    headers = {"Authorization": f"Bearer {token}"}
    with httpx.Client(base_url=case, headers=headers, timeout=30) as client:
        for n in range(creates):
            create_case(client, case_type, n)
    with httpx.Client(base_url=orch, timeout=30) as client:
        task_id = define_task(client)
        wait_runs(client, [schedule_run(client, task_id) for _ in range(tasks)])


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
        roots = {"devserver": server.pid}
        sample(roots, "idle")
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
        sample(roots, "after load")
        rounds, end = 0, time.monotonic() + args.soak_minutes * 60
        while time.monotonic() < end:
            load(case, orch, token, case_type, args.creates, args.tasks)
            rounds += 1
            sample(roots, f"soak round {rounds} ({(time.monotonic() - began) / 60:.1f} min)")
    finally:
        os.killpg(server.pid, signal.SIGINT)
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
        shutil.rmtree(var, ignore_errors=True)


if __name__ == "__main__":
    main()
