#!/usr/bin/env python
"""CPU per request on the 1,000,000-case database (not a test): a measure that other load on the
machine does not change, to go with `bench/case_scale.py`'s wall-clock latencies.

    .venv/bin/python bench/case_scale.py            # once: loads `case_scale_bench`
    .venv/bin/python bench/case_scale_cpu.py        # then: dashboards, assignedTo, deep pages, searches
    .venv/bin/python bench/case_scale_cpu.py "/cases?limit=25&status=closed" --calls 20

Each path is requested in process through the case service's whole Django stack (every middleware,
the JWT of the tenant's admin, row-level security on, production settings), after one warm-up. It
prints, per request: the statements run, PostgreSQL's CPU time (user + system time of the one
backend process, from /proc, with `max_parallel_workers_per_gather = 0` so that no parallel worker
takes a share of the work elsewhere: the total database work, not the latency of a parallel plan),
the Python CPU time, and the wall time (which does depend on the load). PostgreSQL must run on
this machine. Takes the database, tenant and token that `case_scale.py` recorded.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

import case_scale  # noqa: E402  (bench/ is not a package)

PATHS = [
    "/cases/dashboard",
    "/reports/dashboard",
    "/cases?limit=25&assignedTo=me",
    "/cases?limit=25&offset=500000",
    "/cases?limit=25&offset=999975",
    "/cases/search?q=zeppelin",
    "/cases/search?q=SC-0333333",
    "/cases?limit=25",
]


def backend_cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime + stime


def check(path: str, response: Any) -> None:
    if response.status_code != 200:
        raise SystemExit(f"{path}: {response.status_code} {response.content[:200]!r}")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("paths", nargs="*", default=PATHS)
    parser.add_argument("--calls", type=int, default=10, help="measured calls per path")
    parser.add_argument("--info", type=Path, default=ROOT / "var" / "bench-case-scale.info.json")
    args = parser.parse_args()
    info = json.loads(args.info.read_text())
    case_scale.django_setup(case_scale.server_env())

    from django.db import connection
    from django.test import Client

    client = Client(HTTP_HOST="127.0.0.1", HTTP_AUTHORIZATION=f"Bearer {info['token']}")
    print("| request | statements | PostgreSQL CPU | Python CPU | wall |\n|---|---|---|---|---|")
    for path in args.paths:
        check(path, client.get(path))  # warm-up; opens the connection the calls below reuse
        with connection.cursor() as cursor:
            cursor.execute("SET max_parallel_workers_per_gather = 0")
            cursor.execute("SELECT pg_backend_pid()")
            pid = cursor.fetchone()[0]
        statements: list[str] = []

        def count(execute, sql, params, many, context, statements=statements):  # type: ignore[no-untyped-def]
            statements.append(sql)
            return execute(sql, params, many, context)

        with connection.execute_wrapper(count):
            check(path, client.get(path))
        backend, python, wall = backend_cpu_seconds(pid), time.process_time(), time.perf_counter()
        for _ in range(args.calls):
            check(path, client.get(path))
        if connection.connection is None or connection.cursor().connection.info.backend_pid != pid:
            raise SystemExit("the database connection changed between calls: the CPU figure is wrong")
        per_call = [
            (backend_cpu_seconds(pid) - backend) / args.calls,
            (time.process_time() - python) / args.calls,
            (time.perf_counter() - wall) / args.calls,
        ]
        cells = " | ".join(f"{seconds * 1000:.1f} ms" for seconds in per_call)
        print(f"| `GET {path}` | {len(statements)} | {cells} |", flush=True)
    print(f"\nload average {os.getloadavg()}; {args.calls} calls each, serial plans")


if __name__ == "__main__":
    main()
