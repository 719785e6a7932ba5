"""How long a case create holds the serializing locks, and creates per second under contention.

A create of one case type takes that type's counter row lock (numbers stay gap-free, so it is held
to COMMIT) and its tenant's audit-chain lock; creates of one type therefore run one at a time
through whatever the create does between taking the number and committing. This measures, in
process (the service layer's `case_create`, production settings, real PostgreSQL), with threads
each on its own connection:

- **held** (`solo`: one thread, so no wait for the lock is in it): per create, the time from
  sending the statement that takes the number (the first one naming the counter table) to the end
  of COMMIT, as the client sees it: how long the counter row stays locked. In the contended runs
  the same span also holds the wait for the lock, so there it is the time a create spends queued
  and inside;
- **creates/s** of `--threads` threads creating cases of one type in one tenant (`one`), and spread
  over 8 case types in 4 tenants (`spread`).

    .venv/bin/python bench/case_create_locks.py --prepare            # database case_locks, once
    .venv/bin/python bench/case_create_locks.py                      # this checkout's code
    CASE_LOCKS_CODE=/path/to/other/checkout .venv/bin/python bench/case_create_locks.py   # another

Run the two checkouts alternately on one prepared database for a before/after pair; creates/s moves
with the machine's load, the held time much less (it is one or a few round trips), and both print
the load average. Knobs: --threads (8), --creates (per thread, 60).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
CODE = Path(os.environ.get("CASE_LOCKS_CODE", ROOT)).resolve()
sys.path.insert(0, str(CODE))
sys.path.insert(1, str(ROOT / "bench"))
os.environ["CASE_PROFILE_DB"] = os.environ.get("CASE_LOCKS_DB", "case_locks")

import case_profile  # noqa: E402 - the profile's database set-up and settings

sys.path[:] = [str(CODE)] + [p for p in sys.path if p not in (str(CODE), str(ROOT))]  # the code measured

SCHEMA = case_profile.SCHEMA
DATA = {"applicant": {"name": "Ada"}, "amount": 12, "description": "hail"}


def setup_django() -> None:
    os.environ.update(case_profile.environment())
    os.environ["CASE_DB_POOL_MAX_SIZE"] = "0"  # one plain connection per thread
    import django

    django.setup()


def prepare() -> None:
    case_profile.prepare(case_profile.environment())
    setup_django()
    from casemgmt.accounts.models import User
    from casemgmt.cases.services import case_type_create

    env = dict(os.environ)
    for n in range(2, 5):
        subprocess.run(
            [sys.executable, "manage_case.py", "create_tenant", "--name", f"Locks {n}", "--admin-email",
             f"p{n}@profile.test", "--admin-password", "Profile-passw0rd-not-secret!"],
            cwd=CODE, env=env, check=True, stdout=subprocess.DEVNULL,
        )  # fmt: skip
    admins = list(User.objects.filter(roles__name="admin").order_by("email"))[:4]
    for admin in admins:
        for key in ("claim", "permit"):
            case_type_create(user=admin, key=key, display_name=key.title(), schema=SCHEMA)


def run(label: str, pairs: list[tuple[Any, Any]], threads: int, creates: int) -> None:
    from django.db import connection

    from casemgmt.cases.services import case_create

    held: list[float] = []
    lock = threading.Lock()
    barrier = threading.Barrier(threads)

    def worker(index: int) -> None:
        user, case_type = pairs[index % len(pairs)]
        mine: list[float] = []
        start: list[float] = []

        def watch(execute: Any, sql: str, params: Any, many: bool, context: Any) -> Any:
            if not start and "casecounter" in sql:
                start.append(time.perf_counter())
            return execute(sql, params, many, context)

        try:
            with connection.execute_wrapper(watch):
                case_create(user=user, case_type=case_type, data=dict(DATA))  # warm-up, connection
                start.clear()
                barrier.wait()
                for _ in range(creates):
                    case_create(user=user, case_type=case_type, data=dict(DATA))
                    mine.append(time.perf_counter() - start.pop())
        finally:
            connection.close()
        with lock:
            held.extend(mine)

    load = os.getloadavg()[0]
    pool = [threading.Thread(target=worker, args=(i,)) for i in range(threads)]
    began = time.perf_counter()
    for thread in pool:
        thread.start()
    for thread in pool:
        thread.join()
    elapsed = time.perf_counter() - began
    held.sort()
    print(
        f"{label:7} code={CODE.name:10} creates/s={len(held) / elapsed:7.1f} "
        f"held p50={held[len(held) // 2] * 1000:6.2f} ms mean={statistics.mean(held) * 1000:6.2f} ms "
        f"p95={held[int(len(held) * 0.95)] * 1000:6.2f} ms load={load:.1f}",
        flush=True,
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--prepare", action="store_true", help="(re)create the database and exit")
    parser.add_argument("--threads", type=int, default=8)
    parser.add_argument("--creates", type=int, default=60)
    args = parser.parse_args()
    if args.prepare:
        prepare()
        return
    setup_django()
    from casemgmt.accounts.models import User
    from casemgmt.cases.models import CaseType

    admins = list(User.objects.filter(roles__name="admin").order_by("email"))[:4]
    types = {(t.tenant_id, t.key): t for t in CaseType.objects.all()}
    spread = [(a, types[(a.tenant_id, key)]) for key in ("claim", "permit") for a in admins]
    run("solo", spread[:1], 1, args.creates * 2)
    run("one", spread[:1], args.threads, args.creates)
    run("spread", spread, args.threads, args.creates)


if __name__ == "__main__":
    main()
