#!/usr/bin/env python
"""Case service at scale (not a test): 1,000,000 cases and 1,000,000 audit events in one tenant.

One command:  .venv/bin/python bench/case_scale.py   (--cases/--events to change the volume, --reuse to
measure again without reloading, --requests N, --port P to serve elsewhere than the Procfile's port).
On a shared 2-core machine the load took 7 minutes (load average 8) to 14 minutes (load average 27),
measuring 5 to 7 more; a quiet machine is faster.

1. Drops and recreates its own database (`case_scale_bench`), migrates it, and creates a tenant, its
   admin, four more assignees and two case types through the real services.
2. Bulk-loads the cases with COPY (secondary indexes of `cases_case` dropped during the load and
   rebuilt after it), one active human task step for every fourth active case (the `assignedTo`
   filter), and the audit events: each hash is computed with the service's own chain code
   (`shared.audit.hashing`), continuing the chain the services started, so verification really passes.
   Then VACUUM ANALYZE (what autovacuum does to a table at rest).
3. Starts the case service with the production settings exactly as `deploy/Procfile`'s `case-web`
   line runs it, and measures through HTTP, one request at a time (latency, not throughput): list
   pages (first, deep, last), every list filter and sort, search, both dashboards, one case's event
   verification and the whole-chain verification (`GET /audit/verify-chain`), with the server's
   memory before and after it.

Environment: CASE_SCALE_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/case_scale_bench;
dropped and recreated), CASE_SCALE_REDIS_URL (default redis://127.0.0.1:6379). Prints a Markdown
table; raw figures go to var/bench-case-scale.json.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import re
import socket
import statistics
import subprocess
import sys
import time
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import SimpleNamespace
from typing import Any
from urllib.parse import urlparse

import httpx
import psutil
import psycopg
from benchlib import CLAIM_SCHEMA

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
DATABASE_URL = os.environ.get(
    "CASE_SCALE_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/case_scale_bench"
)
REDIS_URL = os.environ.get("CASE_SCALE_REDIS_URL", "redis://127.0.0.1:6379")
PASSWORD = "bench-password-not-secret-42"
WORDS = (
    "water damage roof storm hail flood fire smoke theft burglary vehicle collision windscreen glass "
    "kitchen basement garage garden fence tree lightning pipe leak boiler mould subsidence crack wall "
    "ceiling window door lock laptop phone jewellery bicycle luggage travel medical dental injury"
).split()
SCHEMA = CLAIM_SCHEMA
SPAN_DAYS = 730  # cases created evenly over two years up to now


def server_env() -> dict[str, str]:
    return {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "casemgmt.config.settings.production",
        "CASE_DATABASE_URL": DATABASE_URL,
        "CASE_REDIS_URL": REDIS_URL,
        "CASE_SECRET_KEY": "bench-secret-key-" + "x" * 40,
        "CASE_FIELD_ENCRYPTION_KEYS": "YmVuY2gtb25seS1rZXktbm90LWEtc2VjcmV0LTMyYnk=",  # Fernet, bench only
        "CASE_AUDIT_SIGNING_KEYS": "bench:YmVuY2gtb25seS1hdWRpdC1zaWduaW5nLXNlZWQtMzI=",  # Ed25519 seed, bench only
        "CASE_ALLOWED_HOSTS": "127.0.0.1,localhost",
        "CASE_SECURE_COOKIES": "false",
        "CASE_LOG_LEVEL": "WARNING",
        "TEST_RUN_TOKEN": "scalebench",  # keeps Redis keys apart from other users of this Redis
        # One client measures latency here, not the tenant's rate limits: searches are not throttled.
        "CASE_THROTTLE_SEARCH": "",
    }


def log(message: str) -> None:
    print(f"[{datetime.now(UTC):%H:%M:%S}] {message}", file=sys.stderr, flush=True)


# --- setup --------------------------------------------------------------------------------------


def recreate_database() -> None:
    name = urlparse(DATABASE_URL).path.lstrip("/")
    admin = DATABASE_URL.rsplit("/", 1)[0] + "/postgres"
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{name}"')


def django_setup(env: dict[str, str]) -> None:
    os.environ.update({k: v for k, v in env.items() if k.startswith(("CASE_", "DJANGO_", "TEST_RUN"))})
    import django

    django.setup()


def setup_tenant() -> dict[str, Any]:
    """Tenant, admin, assignees and case types through the real services (their audit events start
    the chain that the bulk load continues)."""
    from django.db import connection

    from casemgmt.accounts.models import Role, User
    from casemgmt.accounts.services import user_create
    from casemgmt.accounts.tenants import tenant_create
    from casemgmt.accounts.tokens import issue_for
    from casemgmt.cases.services import case_type_create

    tenant = tenant_create(name="Scale", admin_email="scale@bench.test", admin_password=PASSWORD)
    admin = User.objects.get(tenant=tenant)
    roles = list(Role.objects.filter(tenant=tenant, name="case_worker")[:1])
    assignees = [str(admin.id)]
    for n in range(4):
        user = user_create(
            tenant=tenant, email=f"worker{n}@bench.test", display_name=f"Worker {n}", roles=roles
        )
        assignees.append(str(user.id))
    types = [
        str(case_type_create(user=admin, key=key, display_name=key, schema=SCHEMA, sla_hours=72).id)
        for key in ("claim", "complaint")
    ]
    info = {
        "tenant": str(tenant.id),
        "admin": str(admin.id),
        "token": issue_for(admin).token,
        "types": types,
        "assignees": assignees,
    }
    connection.close()
    return info


# --- bulk load ----------------------------------------------------------------------------------


def secondary_indexes(cur: psycopg.Cursor, table: str) -> list[tuple[str, str]]:
    """Indexes that back no constraint: safe to drop for a bulk load and rebuild from their DDL."""
    cur.execute(
        "SELECT i.indexname, i.indexdef FROM pg_indexes i WHERE i.tablename = %s AND NOT EXISTS "
        "(SELECT 1 FROM pg_constraint c WHERE c.conname = i.indexname)",
        [table],
    )
    return list(cur.fetchall())


def case_rows(info: dict[str, Any], count: int, now: datetime):
    """Yields (case row, task step or None). Newest case is number `count`."""
    rng = random.Random(11)
    types = info["types"]
    step_seconds = SPAN_DAYS * 86400 / count
    tasks = 0
    for n in range(1, count + 1):
        created = now - timedelta(seconds=(count - n) * step_seconds)
        created = created.replace(microsecond=(created.microsecond // 1000) * 1000)
        data = {
            "applicant": {"name": f"Applicant {rng.randint(1, 10**6)}"},
            "amount": rng.randint(1, 50_000),
            "description": " ".join(rng.choices(WORDS, k=12)),
        }
        if n % 100_000 == 0:
            data["description"] += " zeppelin"  # a rare word: 10 hits per million
        number = f"SC-{n:07d}"
        name = f"Claim {n}"
        text = "\n".join(
            [number, number.replace("-", " "), name, data["applicant"]["name"], data["description"]]
        )
        roll = n % 10
        status = "closed" if roll < 3 else "cancelled" if roll == 3 else "active"
        deadline = created + timedelta(hours=72)
        closed = created + timedelta(hours=rng.randint(1, 120)) if status == "closed" else None
        case_id = uuid.uuid4()
        row = (case_id, info["tenant"], types[n % 2], number, name, status, json.dumps(data), 1, created,
               info["admin"], closed or created, deadline, closed, "", "", text)  # fmt: skip
        step = None
        if status == "active" and n % 4 == 0:
            assignee = info["assignees"][tasks % len(info["assignees"])]
            tasks += 1
            step = (info["tenant"], case_id, "review", "Review", "task", 1, "active", created, True,
                    "case_worker", assignee)  # fmt: skip
        yield row, step


def load_cases(info: dict[str, Any], count: int) -> None:
    now = datetime.now(UTC)
    columns = (
        "id, tenant_id, case_type_id, case_number, display_name, status, data, version, created_at, "
        "created_by_id, updated_at, sla_deadline, closed_at, outcome, status_reason, search_text"
    )
    step_columns = (
        "tenant_id, case_id, step_id, name, type, position, status, activated_at, is_task, role, "
        "assigned_to_id, error, attempts, outcome, escalated, escalation_reason"
    )
    with psycopg.connect(DATABASE_URL) as conn, conn.cursor() as cur:
        dropped = secondary_indexes(cur, "cases_case") + secondary_indexes(cur, "workflows_casestep")
        for name, _ in dropped:
            cur.execute(f'DROP INDEX "{name}"')
        steps = []
        with cur.copy(f"COPY cases_case ({columns}) FROM STDIN") as copy:
            for row, step in case_rows(info, count, now):
                copy.write_row(row)
                if step:
                    steps.append(step)
        with cur.copy(f"COPY workflows_casestep ({step_columns}) FROM STDIN") as copy:
            for step in steps:
                copy.write_row((*step, "", 0, "", False, ""))
        for key in ("claim", "complaint"):
            cur.execute("UPDATE cases_casecounter SET last_number = %s WHERE key = %s", [count // 2 + 1, key])
        conn.commit()
        log(f"copied {count} cases, {len(steps)} task steps; rebuilding {len(dropped)} indexes")
        cur.execute("SET maintenance_work_mem = '512MB'")
        for _, ddl in dropped:
            cur.execute(ddl)
        conn.commit()


def load_events(info: dict[str, Any], count: int) -> None:
    """Continues the tenant's chain from its last event with `count` case events, hashed by the
    service's own code (entry_of + compute_hash), one per case in creation order."""
    from shared.audit.hashing import compute_hash, entry_of

    columns = (
        "id, chain, sequence, timestamp, actor, action, resource, changes, hash, previous_hash, erased, "
        "deleted, tenant_id"
    )
    with psycopg.connect(DATABASE_URL) as conn, conn.cursor() as cur:
        cur.execute(
            "SELECT sequence, hash, timestamp FROM audit_auditevent WHERE chain = %s ORDER BY sequence DESC LIMIT 1",
            [info["tenant"]],
        )
        sequence, previous, _ = cur.fetchone()
        cur.execute(
            "SELECT id, created_at, case_number FROM cases_case ORDER BY created_at LIMIT %s", [count]
        )
        cases = cur.fetchall()
        dropped = secondary_indexes(cur, "audit_auditevent")
        for name, _ in dropped:
            cur.execute(f'DROP INDEX "{name}"')
        with cur.copy(f"COPY audit_auditevent ({columns}) FROM STDIN") as copy:
            for case_id, created, number in cases:
                sequence += 1
                event = SimpleNamespace(
                    id=uuid.uuid4(),
                    timestamp=created,
                    actor=info["admin"],
                    action="case:created",
                    resource=f"cases/{case_id}",
                    changes={"caseNumber": number, "status": "active"},
                )
                digest = compute_hash(previous, entry_of(event))
                copy.write_row((event.id, info["tenant"], sequence, created, event.actor, event.action,
                                event.resource, json.dumps(event.changes), digest, previous, False, False,
                                info["tenant"]))  # fmt: skip
                previous = digest
        conn.commit()
        log(f"copied {len(cases)} audit events; rebuilding {len(dropped)} indexes")
        cur.execute("SET maintenance_work_mem = '512MB'")
        for _, ddl in dropped:
            cur.execute(ddl)
        conn.commit()
    info["case_with_events"] = str(cases[len(cases) // 2][0])


def vacuum() -> None:
    with psycopg.connect(DATABASE_URL, autocommit=True) as conn:
        for table in ("cases_case", "workflows_casestep", "audit_auditevent"):
            conn.execute(f"VACUUM ANALYZE {table}")


# --- server -------------------------------------------------------------------------------------


def procfile_line() -> str:
    for line in (ROOT / "deploy" / "Procfile").read_text().splitlines():
        if line.startswith("case-web:"):
            return line.split(":", 1)[1].strip()
    raise SystemExit("deploy/Procfile has no case-web line")


def procfile_port() -> int:
    """The port `deploy/Procfile`'s case-web line serves on (its `--port`)."""
    found = re.search(r"--port (\d+)", procfile_line())
    if not found:
        raise SystemExit("deploy/Procfile's case-web line has no --port")
    return int(found.group(1))


def procfile_command(port: int) -> str:
    """`deploy/Procfile`'s case-web command, with the port filled in."""
    return re.sub(r"--port \S+", f"--port {port}", procfile_line())


def port_in_use(port: int) -> bool:
    with socket.socket() as probe:
        return probe.connect_ex(("127.0.0.1", port)) == 0


def start_server(env: dict[str, str], port: int) -> subprocess.Popen:
    if port_in_use(port):  # its /healthz would answer for ours: the figures would be another server's
        raise SystemExit(f"port {port} is already in use: stop what listens there or pass --port")
    command = procfile_command(port)
    log(f"server: {command}")
    # The Procfile runs in the project's environment: its bin/ first, as an activated venv would be.
    env = {**env, "PATH": f"{Path(sys.executable).parent}:{env.get('PATH', '')}"}
    output = (ROOT / "var" / "bench-case-scale-server.log").open("w")  # daphne's access log
    proc = subprocess.Popen(
        ["sh", "-c", f"exec {command}"],
        cwd=ROOT,
        env=env,
        start_new_session=True,
        stdout=output,
        stderr=output,
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1).status_code == 200:
                return proc
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    stop_server(proc)
    raise SystemExit("server did not start")


def stop_server(proc: subprocess.Popen) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=15)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, 9)
        proc.wait()


def server_rss_mb(proc: subprocess.Popen) -> float:
    root = psutil.Process(proc.pid)
    total = 0
    for p in [root, *root.children(recursive=True)]:
        with contextlib.suppress(psutil.NoSuchProcess):
            total += p.memory_info().rss
    return round(total / 2**20, 1)


# --- measurements -------------------------------------------------------------------------------


def pct(ordered: list[float], p: float) -> float:
    return round(ordered[min(len(ordered) - 1, int(len(ordered) * p))] * 1000, 1)


def measure(
    http: httpx.Client, label: str, method: str, url: str, requests: int, **kw: Any
) -> dict[str, Any]:
    """`requests` sequential calls after two warm-ups; p50/p95/max in ms, and what one answer held."""
    for _ in range(2):
        http.request(method, url, **kw).raise_for_status()
    latencies = []
    body: Any = None
    for _ in range(requests):
        started = time.perf_counter()
        response = http.request(method, url, **kw)
        latencies.append(time.perf_counter() - started)
        response.raise_for_status()
        body = response.json()
    ordered = sorted(latencies)
    result = {
        "name": label,
        "url": url,
        "requests": requests,
        "p50_ms": pct(ordered, 0.5),
        "p95_ms": pct(ordered, 0.95),
        "max_ms": round(ordered[-1] * 1000, 1),
        "mean_ms": round(statistics.fmean(ordered) * 1000, 1),
        "answer": summary_of(body),
    }
    log(json.dumps(result))
    return result


def summary_of(body: Any) -> str:
    if isinstance(body, dict) and "total" in body:
        return f"total={body['total']}, {len(body.get('data', []))} items"
    if isinstance(body, dict) and "totalActive" in body:
        return f"active={body['totalActive']}, closed={body['totalClosed']}"
    if isinstance(body, dict) and "isValid" in body:
        return f"isValid={body['isValid']}"
    return ""


def http_phase(
    base: str, info: dict[str, Any], args: argparse.Namespace, proc: subprocess.Popen
) -> list[dict]:
    n = args.requests
    total = args.cases
    now = datetime.now(UTC)
    week_ago = (now - timedelta(days=7)).strftime("%Y-%m-%dT%H:%M:%SZ")
    month = (
        (now - timedelta(days=400)).strftime("%Y-%m-%d"),
        (now - timedelta(days=370)).strftime("%Y-%m-%d"),
    )
    claim, _ = info["types"]
    worker = info["assignees"][1]
    lists = [
        ("list, first page", "/cases?limit=25"),
        ("list, page at offset 10,000", "/cases?limit=25&offset=10000"),
        ("list, page in the middle", f"/cases?limit=25&offset={total // 2}"),
        ("list, last page", f"/cases?limit=25&offset={total - 25}"),
        ("list, sortBy=deadline asc", "/cases?limit=25&sortBy=deadline&order=asc"),
        ("list, sortBy=status", "/cases?limit=25&sortBy=status"),
        ("filter status=closed", "/cases?limit=25&status=closed"),
        ("filter status=cancelled", "/cases?limit=25&status=cancelled"),
        ("filter caseTypeId", f"/cases?limit=25&caseTypeId={claim}"),
        ("filter status + caseTypeId", f"/cases?limit=25&status=active&caseTypeId={claim}"),
        ("filter assignedTo=me", "/cases?limit=25&assignedTo=me"),
        ("filter assignedTo=<user>", f"/cases?limit=25&assignedTo={worker}"),
        ("filter createdAfter (last 7 days)", f"/cases?limit=25&createdAfter={week_ago}"),
        ("filter created in one month", f"/cases?limit=25&createdAfter={month[0]}&createdBefore={month[1]}"),
        ("filter status=closed, created in one month",
         f"/cases?limit=25&status=closed&createdAfter={month[0]}&createdBefore={month[1]}"),
        ("search rare word (10 hits)", "/cases/search?q=zeppelin"),
        ("search case number", f"/cases/search?q=SC-{total // 3:07d}"),
        ("search display name", f"/cases/search?q=Claim%20{total * 42 // 100}"),
        ("search two words", "/cases/search?q=kitchen%20boiler"),
        ("search common word", "/cases/search?q=flood"),
        ("dashboard GET /reports/dashboard", "/reports/dashboard"),
        ("dashboard GET /cases/dashboard", "/cases/dashboard"),
    ]  # fmt: skip
    results = []
    headers = {"Authorization": f"Bearer {info['token']}"}
    with httpx.Client(base_url=base, headers=headers, timeout=300) as http:
        for label, url in lists:
            results.append(measure(http, label, "GET", url, n))
        case = info["case_with_events"]
        results.append(measure(http, "verify one case's events", "POST", f"/cases/{case}/events/verify", n))
        results.append(verify_chain(http, proc))
    return results


def verify_chain(http: httpx.Client, proc: subprocess.Popen) -> dict[str, Any]:
    """One whole-chain verification, with the server's resident memory sampled while it runs."""
    before = server_rss_mb(proc)
    peak = before
    started = time.perf_counter()
    with httpx.Client(base_url=str(http.base_url), headers=http.headers, timeout=600) as client:
        import threading

        box: dict[str, Any] = {}
        thread = threading.Thread(target=lambda: box.update(r=client.get("/audit/verify-chain")))
        thread.start()
        while thread.is_alive():
            peak = max(peak, server_rss_mb(proc))
            thread.join(0.5)
    seconds = time.perf_counter() - started
    response = box["r"]
    response.raise_for_status()
    body = response.json()
    result = {
        "name": "verify the whole chain GET /audit/verify-chain",
        "requests": 1,
        "seconds": round(seconds, 1),
        "answer": f"status={body['status']}, entries_checked={body['entries_checked']}",
        "server_rss_mb_before": before,
        "server_rss_mb_peak": peak,
    }
    log(json.dumps(result))
    return result


def table(results: list[dict[str, Any]]) -> str:
    lines = ["| Operation | p50 | p95 | max | answer |", "|---|---|---|---|---|"]
    for r in results:
        if "seconds" in r:
            memory = f"server RSS {r['server_rss_mb_before']} -> peak {r['server_rss_mb_peak']} MB"
            lines.append(f"| {r['name']} | {r['seconds']} s | | | {r['answer']}; {memory} |")
        else:
            lines.append(
                f"| {r['name']} | {r['p50_ms']} ms | {r['p95_ms']} ms | {r['max_ms']} ms | {r['answer']} |"
            )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--cases", type=int, default=1_000_000)
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--requests", type=int, default=30, help="measured requests per operation")
    parser.add_argument(
        "--port", type=int, default=procfile_port(), help="server port (default: the Procfile's)"
    )
    parser.add_argument("--reuse", action="store_true", help="keep the loaded database (from an earlier run)")
    parser.add_argument("--output", type=Path, default=ROOT / "var" / "bench-case-scale.json")
    args = parser.parse_args()

    env = server_env()
    info_file = args.output.with_suffix(".info.json")
    started = time.monotonic()
    migrate = [sys.executable, "manage_case.py", "migrate", "-v0"]
    if args.reuse and info_file.exists():
        info = json.loads(info_file.read_text())
        subprocess.run(migrate, cwd=ROOT, env=env, check=True)  # the code measured may add migrations
        django_setup(env)
    else:
        recreate_database()
        subprocess.run(migrate, cwd=ROOT, env=env, check=True)
        django_setup(env)
        info = setup_tenant()
        log("loading cases")
        load_cases(info, args.cases)
        log("loading audit events")
        load_events(info, min(args.events, args.cases))
        vacuum()
        args.output.parent.mkdir(parents=True, exist_ok=True)
        info_file.write_text(json.dumps(info))
    load_seconds = round(time.monotonic() - started, 1)
    log(f"database ready in {load_seconds} s")
    proc = start_server(env, args.port)
    try:
        results = http_phase(f"http://127.0.0.1:{args.port}", info, args, proc)
    finally:
        stop_server(proc)
    meta = {
        "cases": args.cases,
        "events": args.events,
        "cpus": os.cpu_count(),
        "load_seconds": load_seconds,
        "total_seconds": round(time.monotonic() - started, 1),
        "server": procfile_command(args.port),
        "load_average": os.getloadavg(),
    }
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps({"meta": meta, "results": results}, indent=2))
    print(table(results))
    print(f"\n{json.dumps(meta)}")


if __name__ == "__main__":
    main()
