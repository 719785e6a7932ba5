"""How long a case create holds the serializing locks, creates per second under contention, and
the most sequencing the audit chain off the request path could gain.

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
- **stmt** / **commit** (solo and `paired`): the client time of that statement and from its end to
  the end of the create (the Python that checks the audit hash, and COMMIT), each with **be-cpu**:
  the CPU time its PostgreSQL backend spent on it (`/proc/<pid>/schedstat`, nanoseconds, read
  between round trips while the backend is idle, so it is the statement's own CPU whatever the
  machine's load); **cycle**: one create, end to end; **be/create**, **py/create**: the backends'
  and this process's CPU per create in every run;
- **creates/s** of `--threads` threads creating cases of one type in one tenant (`one`), spread
  over 8 case types in 4 tenants (`spread4`: two types share each tenant's chain lock) and over 8
  case types in 8 tenants (`spread8`: no chain lock shared). spread8 against spread4 is what the
  shared chain lock costs spread creates. `paired`: one thread alternating the variants create by
  create, so that each meets the same moments' load.

Audit variants (`--variants`), each the service's own statement with the append function swapped:

- `chained`: the code as it is (the append takes the chain lock, reads the head, hashes, inserts);
- `unsequenced`: what a request would still do if a sequencer assigned position and hash later
  (option b of issue #29): the same function call and parameters, into a copy of the audit table
  (its rows, indexes and foreign keys, `sequence`/`hash`/`previous_hash` nullable, the sequencer's
  partial index), no lock, no head read, no hash. The upper bound of what (b) removes from the locked section;
- `none` (solo only): no audit row at all, to show what the row's insert itself costs;
- `hold`: `chained` with a copy of the append function that also returns when it asked for the
  chain lock and when it got it (two `clock_timestamp()`), so the chain lock's **wait** and **hold**
  per append (grant to end of COMMIT: the server's and this process's clocks are the one system
  clock) are measured, and the share of the creates' time spent waiting for it.

    .venv/bin/python bench/case_create_locks.py --prepare            # once: case_locks, 8 tenants x 2 types
    .venv/bin/python bench/case_create_locks.py                      # this checkout's code
    .venv/bin/python bench/case_create_locks.py --repeats 4 --variants chained,unsequenced,none,hold \
        --modes paired,one,spread4,spread8,spread8,spread4           # what option (b) could gain
    CASE_LOCKS_CODE=/path/to/other/checkout .venv/bin/python bench/case_create_locks.py   # another

Runs are interleaved (each repeat runs every mode and variant in turn), so that the machine's load
falls on all alike; each line prints the load average. Run two checkouts alternately on one
prepared database for a before/after pair (variants other than `chained` need the number, the case
and the audit append in one statement). Knobs: --threads (8), --creates (per thread, 60),
--modes (solo,one,spread4,spread8), --variants (chained), --repeats (1); CASE_LOCKS_DB names the
database.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import threading
import time
from collections import defaultdict
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


TENANTS = 8
KEYS = ("claim", "permit")


def prepare() -> None:
    case_profile.prepare(case_profile.environment())
    setup_django()
    from casemgmt.accounts.models import User
    from casemgmt.cases.services import case_type_create

    env = dict(os.environ)
    for n in range(2, TENANTS + 1):
        subprocess.run(
            [sys.executable, "manage_case.py", "create_tenant", "--name", f"Locks {n}", "--admin-email",
             f"p{n}@profile.test", "--admin-password", "Profile-passw0rd-not-secret!"],
            cwd=CODE, env=env, check=True, stdout=subprocess.DEVNULL,
        )  # fmt: skip
    for admin in admins(User):
        for key in KEYS:
            case_type_create(user=admin, key=key, display_name=key.title(), schema=SCHEMA)


def admins(user_model: Any) -> list[Any]:
    """One admin per tenant, the same order every time."""
    found = list(user_model.objects.filter(roles__name="admin").order_by("email"))
    if len({a.tenant_id for a in found}) < TENANTS:
        raise SystemExit(f"fewer than {TENANTS} tenants: run --prepare again")
    return found[:TENANTS]


# -- Audit variants -------------------------------------------------------------------------------
# The service's final statement calls the append function through `DeferredAppend.call`; a variant
# swaps the function (or the call) and its `finish`, nothing else: the statement, its parameters and
# its preparing stay the service's.

UNSEQUENCED = "bench_audit_unsequenced"
TIMED = "bench_audit_append_timed"
variant = {"name": "chained"}  # read by the wrapped record_deferred at each create
granted = threading.local()


def install_variants() -> None:
    """The unsequenced table and function and the timed copy of the append function (idempotent;
    the unsequenced table starts as a copy of the audit table each invocation)."""
    import psycopg

    from casemgmt.audit.models import AuditEvent
    from shared.audit.services import append_function_sql

    table, function = AuditEvent._meta.db_table, AuditEvent.APPEND_FUNCTION
    timed, _ = append_function_sql(table, {"tenant_id": "uuid"})
    lock = f"PERFORM pg_advisory_xact_lock(hashtextextended('{table}:' || p_chain, 0));\n"
    edits = [
        (f"FUNCTION {function}(", f"FUNCTION {TIMED}("),
        ("out_hash varchar)", "out_hash varchar, out_requested double precision, out_granted double precision)"),
        ("DECLARE\n", "DECLARE\n  requested double precision;\n  granted double precision;\n"),
        ("  " + lock, "  requested := extract(epoch FROM clock_timestamp());\n  " + lock
         + "  granted := extract(epoch FROM clock_timestamp());\n"),
        ("SELECT head_sequence, stamp, head_hash, new_hash;",
         "SELECT head_sequence, stamp, head_hash, new_hash, requested, granted;"),
    ]  # fmt: skip
    for old, new in edits:
        if timed.count(old) != 1:
            raise SystemExit(f"the append function changed shape; cannot time it ({old!r})")
        timed = timed.replace(old, new)
    unsequenced = f"""
DROP TABLE IF EXISTS {UNSEQUENCED};
CREATE TABLE {UNSEQUENCED} (LIKE {table} INCLUDING ALL);
ALTER TABLE {UNSEQUENCED} ALTER sequence DROP NOT NULL, ALTER hash DROP NOT NULL,
  ALTER previous_hash DROP NOT NULL;
CREATE INDEX {UNSEQUENCED}_pending ON {UNSEQUENCED} (chain, timestamp) WHERE sequence IS NULL;
DO $do$ DECLARE r record; BEGIN  -- its foreign keys too (checked at COMMIT, as the audit table's)
  FOR r IN SELECT conname, pg_get_constraintdef(oid) AS def FROM pg_constraint
           WHERE conrelid = '{table}'::regclass AND contype = 'f' LOOP
    EXECUTE format('ALTER TABLE {UNSEQUENCED} ADD CONSTRAINT %I %s', r.conname || '_u', r.def);
  END LOOP;
END $do$;
-- As big as the audit table (in steady state (b)'s table holds the sequenced rows too), so that
-- neither insert meets smaller indexes.
INSERT INTO {UNSEQUENCED} SELECT * FROM {table};
ANALYZE {UNSEQUENCED};
CREATE OR REPLACE FUNCTION {UNSEQUENCED}_append(
  p_id uuid, p_chain varchar, p_actor varchar, p_action varchar, p_resource varchar,
  p_changes jsonb, p_entry_head text, p_tenant_id uuid
) RETURNS TABLE (out_sequence bigint, out_timestamp timestamptz, out_previous_hash varchar, out_hash varchar)
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  stamp timestamptz;
BEGIN
  stamp := date_trunc('milliseconds', clock_timestamp());
  INSERT INTO {UNSEQUENCED} (id, chain, sequence, timestamp, actor, action, resource, changes, hash,
                             previous_hash, erased, deleted, tenant_id)
    VALUES (p_id, p_chain, NULL, stamp, p_actor, p_action, p_resource, p_changes, NULL, NULL,
            false, false, p_tenant_id);
  RETURN QUERY SELECT NULL::bigint, stamp, NULL::varchar, NULL::varchar;
END;
$$;
"""  # noqa: S608 - DDL over names from code
    url = f"postgresql://postgres@127.0.0.1:5432/{case_profile.DB}"
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f"DROP FUNCTION IF EXISTS {TIMED}")
        conn.execute(timed)
        conn.execute(unsequenced)


def wrap_record_deferred() -> None:
    from casemgmt.audit.models import AuditEvent
    from casemgmt.cases import services
    from shared.audit.services import DeferredAppend

    function = AuditEvent.APPEND_FUNCTION

    class Unsequenced(DeferredAppend):
        def call(self, value_sql: str) -> tuple[str, dict[str, Any]]:
            call, params = super().call(value_sql)
            return call.replace(function, f"{UNSEQUENCED}_append", 1), params

        def finish(self, value: str, row: tuple[Any, ...]) -> Any:
            self.event.changes = {**self.event.changes, self.key: value}
            self.event.sequence, self.event.timestamp, self.event.previous_hash, self.event.hash = row
            return self.event

    class NoAudit(Unsequenced):
        def call(self, value_sql: str) -> tuple[str, dict[str, Any]]:
            nulls = "NULL::bigint, NULL::timestamptz, NULL::varchar, NULL::varchar"
            return f"(SELECT {nulls})", {}

    class Timed(DeferredAppend):
        def call(self, value_sql: str) -> tuple[str, dict[str, Any]]:
            call, params = super().call(value_sql)
            return call.replace(function, TIMED, 1), params

        def finish(self, value: str, row: tuple[Any, ...]) -> Any:
            granted.requested, granted.at = row[-2:]
            return super().finish(value, row[:-2])  # the hash is checked as in the service

    classes = {"unsequenced": Unsequenced, "none": NoAudit, "hold": Timed}
    if not hasattr(services, "record_deferred"):
        raise SystemExit("this code appends the audit row apart from the number: --variants chained only")
    original = services.record_deferred

    def record_deferred(**kwargs: Any) -> Any:
        append = original(**kwargs)
        if variant["name"] in classes:
            append.__class__ = classes[variant["name"]]
        return append

    services.record_deferred = record_deferred


# -- Runs -----------------------------------------------------------------------------------------


def cpu_ns(pid: int) -> int:
    """CPU time a process (a PostgreSQL backend) has run, in nanoseconds."""
    with open(f"/proc/{pid}/schedstat") as stat:
        return int(stat.read().split()[0])


def ms(values: list[float], at: float = 0.5) -> str:
    values = sorted(values)
    return f"{values[min(int(len(values) * at), len(values) - 1)] * 1000:6.2f}"


be_after: dict[int, int] = {}  # a backend's CPU time when the number statement ended


def record(
    mine: dict[str, list[float]], name: str, cycle: float, held: float, after: float, pid: int
) -> None:
    """One create's measures, just after it returned (`pid`: solo's backend, else 0)."""
    wall = time.time()
    mine[f"{name} held"].append(held)
    mine[f"{name} cycle"].append(cycle)
    if pid:
        mine[f"{name} after"].append(after)
        mine[f"{name} be_after"].append((cpu_ns(pid) - be_after[pid]) / 1e9)
    if name == "hold":
        mine[f"{name} chain"].append(wall - granted.at)
        mine[f"{name} wait"].append(granted.at - granted.requested)


def run(label: str, pairs: list[tuple[Any, Any]], threads: int, creates: int, names: list[str]) -> None:
    """`names`: the variant of each create in turn (one name: all alike; several: `paired`, one
    thread alternating them create by create, so that each variant meets the same moments' load)."""
    from django.db import connection

    from casemgmt.cases.services import case_create

    solo = threads == 1
    found: dict[str, list[float]] = defaultdict(list)  # "<variant> <measure>": seconds
    backend_ns: list[int] = []
    lock = threading.Lock()
    barrier = threading.Barrier(threads + 1)

    def worker(index: int) -> None:
        user, case_type = pairs[index % len(pairs)]
        mine: dict[str, list[float]] = defaultdict(list)
        start: list[float] = []
        statement: list[float] = []  # the number statement's end, client clock

        def watch(execute: Any, sql: str, params: Any, many: bool, context: Any) -> Any:
            if start or "casecounter" not in sql:
                return execute(sql, params, many, context)
            cpu = cpu_ns(pid) if solo else 0
            start.append(time.perf_counter())
            try:
                return execute(sql, params, many, context)
            finally:
                statement.append(time.perf_counter())
                if solo:
                    be_after[pid] = cpu_ns(pid)
                    mine[f"{variant['name']} stmt"].append(statement[0] - start[0])
                    mine[f"{variant['name']} be_stmt"].append((be_after[pid] - cpu) / 1e9)

        try:
            for name in names:  # warm-up: connect, prepare each variant's statement
                variant["name"] = name
                case_create(user=user, case_type=case_type, data=dict(DATA))
            pid = connection.connection.info.backend_pid
            barrier.wait()
            began, cycle = cpu_ns(pid), time.perf_counter()
            with connection.execute_wrapper(watch):
                for number in range(creates):
                    name = variant["name"] = names[number % len(names)]
                    case_create(user=user, case_type=case_type, data=dict(DATA))
                    end = time.perf_counter()
                    record(mine, name, end - cycle, end - start.pop(), end - statement[0], pid if solo else 0)
                    cycle = end
                    statement.clear()
            used = cpu_ns(pid) - began
        except BaseException:
            barrier.abort()  # the run ends instead of waiting for this thread
            raise
        finally:
            connection.close()
        with lock:
            for key, values in mine.items():
                found[key].extend(values)
            backend_ns.append(used)

    load = os.getloadavg()[0]
    pool = [threading.Thread(target=worker, args=(i,)) for i in range(threads)]
    for thread in pool:
        thread.start()
    barrier.wait()  # every thread connected and warmed up
    began, process = time.perf_counter(), time.process_time()
    for thread in pool:
        thread.join()
    elapsed, process = time.perf_counter() - began, time.process_time() - process
    for name in dict.fromkeys(names):
        totals = (elapsed, process / len(names), sum(backend_ns) / 1e9 / len(names))
        report(label, name, {k.split()[1]: v for k, v in found.items() if k.split()[0] == name}, totals, load)


def report(
    label: str, name: str, found: dict[str, list[float]], totals: tuple[float, ...], load: float
) -> None:
    """One line per run and variant; in a paired run the process and backend CPU are shared out
    evenly (they are not told apart) and creates/s is this variant's share of the run."""
    elapsed, process, backend = totals
    count = len(found["held"])
    line = (
        f"{label:8} {name:11} code={CODE.name:8} creates/s={count / elapsed:6.1f} "
        f"held p50={ms(found['held'])} mean={statistics.mean(found['held']) * 1000:6.2f} ms "
        f"be/create={backend / count * 1000:5.2f} ms py/create={process / count * 1000:5.2f} ms"
    )
    if "stmt" in found:
        line += (
            f" | cycle p50={ms(found['cycle'])} stmt p50={ms(found['stmt'])} be-cpu={ms(found['be_stmt'])}"
            f" commit p50={ms(found['after'])} be-cpu={ms(found['be_after'])} ms"
        )
    if "chain" in found:
        share = sum(found["wait"]) / sum(found["cycle"])
        line += (
            f" | chain lock held p50={ms(found['chain'])} p95={ms(found['chain'], 0.95)} ms,"
            f" wait p50={ms(found['wait'])} mean={statistics.mean(found['wait']) * 1000:6.2f} ms"
            f" ({share:.0%} of the creates' time)"
        )
    print(f"{line} load={load:.1f}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--prepare", action="store_true", help="(re)create the database and exit")
    parser.add_argument("--threads", type=int, default=8)
    parser.add_argument("--creates", type=int, default=60)
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--modes", default="solo,one,spread4,spread8")
    parser.add_argument("--variants", default="chained")
    args = parser.parse_args()
    if args.prepare:
        prepare()
        return
    setup_django()
    from casemgmt.accounts.models import User
    from casemgmt.cases.models import CaseType

    variants = args.variants.split(",")
    if variants != ["chained"]:
        install_variants()
        wrap_record_deferred()
    tenants = admins(User)
    types = {(t.tenant_id, t.key): t for t in CaseType.objects.all()}
    modes = {
        "solo": ([(tenants[0], types[(tenants[0].tenant_id, "claim")])], 1, args.creates * 5),
        "one": ([(tenants[0], types[(tenants[0].tenant_id, "claim")])], args.threads, args.creates),
        "spread4": ([(a, types[(a.tenant_id, k)]) for k in KEYS for a in tenants[:4]], args.threads, args.creates),
        "spread8": ([(a, types[(a.tenant_id, "claim")]) for a in tenants], args.threads, args.creates),
    }  # fmt: skip
    modes["paired"] = (*modes["solo"][:2], args.creates * 5 * len(variants))
    only = {"none": ("solo",), "hold": ("solo", "spread4", "spread8")}
    for repeat in range(args.repeats):
        order = variants if repeat % 2 == 0 else variants[::-1]  # A B, then B A: no order favoured
        for mode in args.modes.split(","):
            if mode == "paired":
                run(mode, *modes[mode], order)
                continue
            for name in order:
                if mode in only.get(name, (mode,)):
                    run(mode, *modes[mode], [name])


if __name__ == "__main__":
    main()
