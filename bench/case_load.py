#!/usr/bin/env python
"""Case service load benchmark (not a test).

Measures, against the production settings (PostgreSQL, Redis, uvicorn with one worker per core):
  1. case creation throughput and p50/p95/p99 latency (POST /cases),
  2. case read throughput and latency (GET /cases/{id}),
  3. search latency (GET /cases/search) with 100k cases seeded (COPY, bypassing the API),
  4. a bare baseline on the same machine: raw psycopg INSERT (one transaction each) and SELECT by
     primary key at the same concurrency, so the service's overhead is a ratio.

Usage:  .venv/bin/python bench/case_load.py [--duration 20] [--concurrency 32] [--seed 100000]
        [--server uvicorn|gunicorn] [--workers N] [--tenants N] [--skip-search]
Environment: CASE_BENCH_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/case_bench; the database
is dropped and recreated), CASE_BENCH_REDIS_URL (default redis://127.0.0.1:6379). Each run takes < 3 min.
The load generator runs on the same machine as the server and competes with it for the CPUs.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import statistics
import subprocess
import sys
import time
import uuid
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import urlparse

import httpx
import psutil
import psycopg
from benchlib import CLAIM_SCHEMA

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
DATABASE_URL = os.environ.get("CASE_BENCH_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/case_bench")
REDIS_URL = os.environ.get("CASE_BENCH_REDIS_URL", "redis://127.0.0.1:6379")
PASSWORD = "bench-password-not-secret-42"
WORDS = (
    "water damage roof storm hail flood fire smoke theft burglary vehicle collision windscreen glass "
    "kitchen basement garage garden fence tree lightning pipe leak boiler mould subsidence crack wall "
    "ceiling window door lock laptop phone jewellery bicycle luggage travel medical dental injury"
).split()
SCHEMA = CLAIM_SCHEMA


def server_env() -> dict[str, str]:
    return {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "casemgmt.config.settings.production",
        "CASE_DATABASE_URL": DATABASE_URL,
        "CASE_REDIS_URL": REDIS_URL,
        "CASE_SECRET_KEY": "bench-secret-key-" + "x" * 40,
        "CASE_AUDIT_SIGNING_KEYS": "bench:YmVuY2gtb25seS1hdWRpdC1zaWduaW5nLXNlZWQtMzI=",  # Ed25519 seed, bench only
        "CASE_ALLOWED_HOSTS": "127.0.0.1,localhost",
        "CASE_SECURE_COOKIES": "false",
        "CASE_LOG_LEVEL": "WARNING",
        "TEST_RUN_TOKEN": "bench",  # keeps Redis keys apart from other users of this Redis
    }


def recreate_database() -> None:
    url = urlparse(DATABASE_URL)
    name = url.path.lstrip("/")
    admin = DATABASE_URL.rsplit("/", 1)[0] + "/postgres"
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{name}"')


def setup_tenant(env: dict[str, str], tenants: int) -> dict[str, object]:
    """Migrates, then creates tenants, their admins' tokens and case types through the real services.
    The first tenant also gets the case type that the search phase bulk-loads."""
    subprocess.run([sys.executable, "manage_case.py", "migrate", "-v0"], cwd=ROOT, env=env, check=True)
    os.environ.update({k: v for k, v in env.items() if k.startswith(("CASE_", "DJANGO_", "TEST_RUN"))})
    import django

    django.setup()
    from django.db import connection

    from casemgmt.accounts.models import User
    from casemgmt.accounts.tenants import tenant_create
    from casemgmt.accounts.tokens import issue_for
    from casemgmt.cases.services import case_type_create

    writers = []
    for n in range(tenants):
        tenant = tenant_create(name=f"Bench {n}", admin_email=f"bench{n}@bench.test", admin_password=PASSWORD)
        admin = User.objects.get(tenant=tenant)
        claim = case_type_create(
            user=admin, key="insurance_claim", display_name="Claim", schema=SCHEMA, sla_hours=72
        )
        writers.append({"tenant": str(tenant.id), "admin": str(admin.id), "token": issue_for(admin).token,
                        "case_type": str(claim.id)})  # fmt: skip
    first = User.objects.get(id=writers[0]["admin"])
    seeded = case_type_create(user=first, key="seeded_claim", display_name="Seeded", schema=SCHEMA)
    connection.close()
    return {**writers[0], "seed_type": str(seeded.id), "writers": writers}


def start_server(env: dict[str, str], port: int, workers: int, server: str) -> subprocess.Popen:
    if server == "gunicorn":  # WSGI: no per-request thread hop of Django's ASGI handler
        args = [
            sys.executable, "-m", "gunicorn", "bench.case_wsgi:application", "-b", f"127.0.0.1:{port}",
            "-w", str(workers), "-k", "gthread", "--threads", "4", "--log-level", "warning",
        ]  # fmt: skip
    else:
        args = [
            sys.executable, "-m", "uvicorn", "casemgmt.config.asgi:application", "--host", "127.0.0.1",
            "--port", str(port), "--workers", str(workers), "--no-access-log", "--log-level", "warning",
        ]  # fmt: skip
    proc = subprocess.Popen(args, cwd=ROOT, env=env, start_new_session=True)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1).status_code == 200:
                return proc
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    proc.kill()
    raise SystemExit("server did not start")


def summarize(
    name: str, latencies: list[float], errors: int, elapsed: float, cpu: dict[str, float] | None = None
) -> dict[str, object]:
    ordered = sorted(latencies)

    def pct(p: float) -> float:
        return round(ordered[min(len(ordered) - 1, int(len(ordered) * p))] * 1000, 2) if ordered else 0.0

    result = {
        "name": name,
        "requests": len(latencies),
        "errors": errors,
        "seconds": round(elapsed, 2),
        "throughput_per_s": round(len(latencies) / elapsed, 1),
        "p50_ms": pct(0.50),
        "p95_ms": pct(0.95),
        "p99_ms": pct(0.99),
        "mean_ms": round(statistics.fmean(ordered) * 1000, 2) if ordered else 0.0,
        **(cpu or {}),
    }
    print(json.dumps(result), flush=True)
    return result


async def closed_loop(name: str, concurrency: int, duration: float, call) -> dict[str, object]:
    """`concurrency` clients each sending the next request as soon as the last one answered."""
    latencies: list[float] = []
    errors = 0
    stop = time.monotonic() + duration

    async def client(index: int) -> None:
        nonlocal errors
        while time.monotonic() < stop:
            started = time.perf_counter()
            ok = await call(index)
            if ok:
                latencies.append(time.perf_counter() - started)
            else:
                errors += 1

    started = time.monotonic()
    before = cpu_seconds()
    await asyncio.gather(*(client(i) for i in range(concurrency)))
    elapsed = time.monotonic() - started
    used = {k: round((v - before[k]) / elapsed, 2) for k, v in cpu_seconds().items()}
    return summarize(name, latencies, errors, elapsed, cpu=used)


SERVER: subprocess.Popen | None = None


def cpu_seconds() -> dict[str, float]:
    """CPU seconds used so far by the server's processes, this load generator and the whole machine
    (divided by the elapsed time: cores busy on average)."""
    server = 0.0
    if SERVER is not None and SERVER.poll() is None:
        root = psutil.Process(SERVER.pid)
        for proc in [root, *root.children(recursive=True)]:
            try:
                times = proc.cpu_times()
                server += times.user + times.system
            except psutil.NoSuchProcess:
                pass
    own = psutil.Process().cpu_times()
    machine = psutil.cpu_times()
    busy = machine.user + machine.system + getattr(machine, "softirq", 0) + getattr(machine, "irq", 0)
    return {"server_cores": server, "client_cores": own.user + own.system, "machine_cores": busy}


def claim_data(rng: random.Random) -> dict[str, object]:
    return {
        "applicant": {"name": f"Applicant {rng.randint(1, 10**6)}"},
        "amount": rng.randint(1, 50_000),
        "description": " ".join(rng.choices(WORDS, k=12)),
    }


async def http_phases(
    base: str, info: dict[str, object], args: argparse.Namespace
) -> list[dict[str, object]]:
    """Client i writes as tenant i % N (--tenants); reads use the token of the case's tenant."""
    writers: list[dict[str, str]] = info["writers"]  # type: ignore[assignment]
    auth = [{"Authorization": f"Bearer {w['token']}"} for w in writers]
    limits = httpx.Limits(max_connections=args.concurrency, max_keepalive_connections=args.concurrency)
    rng = random.Random(7)
    created: list[tuple[int, str]] = []
    results = []
    async with httpx.AsyncClient(base_url=base, limits=limits, timeout=30) as http:

        async def create(index: int) -> bool:
            writer = index % len(writers)
            body = {"caseTypeId": writers[writer]["case_type"], "data": claim_data(rng)}
            response = await http.post("/cases", json=body, headers=auth[writer])
            if response.status_code == 201:
                created.append((writer, response.json()["id"]))
                return True
            return False

        async def read(_: int) -> bool:
            writer, case_id = rng.choice(created)
            response = await http.get(f"/cases/{case_id}", headers=auth[writer])
            return response.status_code == 200

        async def listing(index: int) -> bool:
            return await _ok(http.get("/cases?limit=25", headers=auth[index % len(writers)]))

        await closed_loop("warmup", 4, 3, create)
        suffix = f" ({len(writers)} tenants)" if len(writers) > 1 else ""
        results.append(
            await closed_loop(f"create POST /cases{suffix}", args.concurrency, args.duration, create)
        )
        results.append(await closed_loop("read GET /cases/{id}", args.concurrency, args.duration, read))
        results.append(
            await closed_loop("list GET /cases?limit=25", args.concurrency, args.duration / 2, listing)
        )
    return results


async def _ok(request) -> bool:
    return (await request).status_code == 200


def seed_cases(info: dict[str, str], count: int) -> float:
    """Bulk-loads `count` cases with COPY; search_vector is computed by PostgreSQL on insert."""
    rng = random.Random(11)
    started = time.monotonic()
    now = datetime.now(UTC)
    columns = (
        "id, tenant_id, case_type_id, case_number, display_name, status, data, version, created_at, "
        "created_by_id, updated_at, outcome, status_reason, search_text"
    )
    with psycopg.connect(DATABASE_URL) as conn, conn.cursor() as cur:
        with cur.copy(f"COPY cases_case ({columns}) FROM STDIN") as copy:
            for n in range(1, count + 1):
                data = claim_data(rng)
                if n % 10_000 == 0:
                    data["description"] += " zeppelin"  # a rare word: 10 hits per 100k
                number = f"SC-{n:06d}"
                name = f"Seeded claim {n}"
                text = "\n".join(
                    [number, number.replace("-", " "), name, data["applicant"]["name"], data["description"]]
                )
                status = "closed" if n % 3 == 0 else "active"
                copy.write_row(
                    (uuid.uuid4(), info["tenant"], info["seed_type"], number, name, status, json.dumps(data), 1,
                     now, info["admin"], now, "", "", text)
                )  # fmt: skip
        cur.execute("UPDATE cases_casecounter SET last_number = %s WHERE key = 'seeded_claim'", [count])
        conn.commit()
    with psycopg.connect(DATABASE_URL, autocommit=True) as conn:
        conn.execute("VACUUM ANALYZE cases_case")
    return time.monotonic() - started


async def search_phase(base: str, info: dict[str, str], args: argparse.Namespace) -> list[dict[str, object]]:
    headers = {"Authorization": f"Bearer {info['token']}"}
    queries = {
        "rare word (10 hits)": "zeppelin",
        "case number": "SC-004242",
        "two words (~3% hits)": "kitchen boiler",
        "common word (~25% hits)": "flood",
    }
    results = []
    async with httpx.AsyncClient(base_url=base, headers=headers, timeout=60) as http:
        for label, q in queries.items():
            first = await http.get("/cases/search", params={"q": q})
            total = first.json()["total"]
            results.append(
                await closed_loop(
                    f"search '{q}' {label}, total={total}",
                    4,
                    args.duration / 4,
                    lambda _, q=q: _ok(http.get("/cases/search", params={"q": q})),
                )
            )
    return results


async def baseline(args: argparse.Namespace) -> list[dict[str, object]]:
    """The bare database: one INSERT per transaction and SELECT by primary key, same concurrency."""
    concurrency = min(args.concurrency, 32)
    with psycopg.connect(DATABASE_URL, autocommit=True) as conn:
        conn.execute(
            "CREATE TABLE IF NOT EXISTS bench_baseline (id uuid PRIMARY KEY, tenant_id uuid, number text, "
            "data jsonb, created_at timestamptz DEFAULT now())"
        )
    conns = [await psycopg.AsyncConnection.connect(DATABASE_URL, autocommit=True) for _ in range(concurrency)]
    ids: list[uuid.UUID] = []
    rng = random.Random(5)
    tenant = uuid.uuid4()

    async def insert(index: int) -> bool:
        row_id = uuid.uuid4()
        await conns[index].execute(
            "INSERT INTO bench_baseline (id, tenant_id, number, data) VALUES (%s, %s, %s, %s)",
            [row_id, tenant, f"B-{len(ids):06d}", json.dumps(claim_data(rng))],
        )
        ids.append(row_id)
        return True

    async def select(index: int) -> bool:
        cur = await conns[index].execute(
            "SELECT id, number, data FROM bench_baseline WHERE id = %s", [rng.choice(ids)]
        )
        return (await cur.fetchone()) is not None

    results = [
        await closed_loop("baseline psycopg INSERT", concurrency, args.duration / 2, insert),
        await closed_loop("baseline psycopg SELECT by pk", concurrency, args.duration / 2, select),
    ]
    for conn in conns:
        await conn.close()
    return results


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--duration", type=float, default=20, help="seconds per create/read phase")
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 2, help="uvicorn worker processes")
    parser.add_argument("--seed", type=int, default=100_000, help="cases bulk-loaded for the search phase")
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument(
        "--server", choices=["uvicorn", "gunicorn"], default="uvicorn", help="ASGI or WSGI server"
    )
    parser.add_argument("--tenants", type=int, default=1, help="spread creations over N tenants")
    parser.add_argument("--skip-search", action="store_true", help="skip seeding and the search phase")
    parser.add_argument("--output", type=Path, default=ROOT / "var" / "bench-case-load.json")
    args = parser.parse_args()

    env = server_env()
    recreate_database()
    info = setup_tenant(env, args.tenants)
    global SERVER
    server = SERVER = start_server(env, args.port, args.workers, args.server)
    base = f"http://127.0.0.1:{args.port}"
    try:
        results = asyncio.run(http_phases(base, info, args))
        if not args.skip_search:
            seconds = seed_cases(info, args.seed)
            print(json.dumps({"name": "seed", "cases": args.seed, "seconds": round(seconds, 1)}), flush=True)
            results += asyncio.run(search_phase(base, info, args))
    finally:
        server.terminate()
        server.wait(timeout=20)
    results += asyncio.run(baseline(args))
    args.output.parent.mkdir(parents=True, exist_ok=True)
    meta = {
        "cpus": os.cpu_count(),
        "workers": args.workers,
        "concurrency": args.concurrency,
        "seed": args.seed,
    }
    args.output.write_text(json.dumps({"meta": meta, "results": results}, indent=2))
    print(f"results written to {args.output}")


if __name__ == "__main__":
    main()
