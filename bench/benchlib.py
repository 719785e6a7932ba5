"""Pieces the benchmark scripts share (they run as `python bench/<script>.py`, so this folder is on
their import path)."""

from __future__ import annotations

import os
from datetime import UTC, datetime
from pathlib import Path

TICK = os.sysconf("SC_CLK_TCK")

# The case type schema every case benchmark registers: the case-floor harness's.
CLAIM_SCHEMA = {
    "type": "object",
    "required": ["applicant", "amount"],
    "properties": {
        "applicant": {"type": "object", "required": ["name"], "properties": {"name": {"type": "string"}}},
        "amount": {"type": "number", "minimum": 0},
        "description": {"type": "string"},
    },
}


def ensure_database(db_url: str) -> None:
    """Creates the database at `db_url` if it is missing and migrates it (Django set up for it)."""
    import psycopg
    from django.core.management import call_command

    server, name = db_url.rsplit("/", 1)
    with psycopg.connect(server + "/postgres", autocommit=True) as conn:
        if not conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone():
            conn.execute(f'CREATE DATABASE "{name}"')
    call_command("migrate", verbosity=0)


def proc_cpu(pid: int) -> float:
    """User + system CPU seconds of a process of this machine (0 when it cannot be read)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / TICK


LAYER_WIDTH = 100  # tasks per layer of the benchmarks' big layered DAG


def bulk_define_layered(prefix: str, total: int, queue: str) -> str:
    """A DAG of `total` tasks in layers of LAYER_WIDTH, each after two tasks of the layer before,
    its definitions bulk-inserted (benchmark setup, not measured: the services define one task per
    call, with its version and audit row); returns the DAG's id."""
    from orchestrator.definitions import services
    from orchestrator.definitions.models import TaskDefinition

    now = datetime.now(UTC)
    rows = []
    for i in range(total):
        layer = i // LAYER_WIDTH
        deps: list[str] = []
        if layer:
            base = (layer - 1) * LAYER_WIDTH
            deps = sorted(
                {f"{prefix}{base + (i * 7) % LAYER_WIDTH}", f"{prefix}{base + (i * 13 + 1) % LAYER_WIDTH}"}
            )
        rows.append(
            TaskDefinition(
                id=f"{prefix}{i}",
                name="",
                command="true",
                dependencies=deps,
                parameters={},
                queue=queue,
                created_at=now,
                updated_at=now,
            )  # fmt: skip
        )
    TaskDefinition.objects.bulk_create(rows, batch_size=2000)
    dag_id = f"{prefix}dag"
    tasks = [{"id": f"{prefix}{i}", "parameters": {}} for i in range(total)]
    services.dag_put(dag_id=dag_id, name="", description="", tasks=tasks, context=None, tags=[])
    return dag_id
