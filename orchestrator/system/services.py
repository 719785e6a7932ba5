"""The recovery sweep, run by every agent (and by beat where one runs) under a database lock: any
one live agent keeps recovery going, and two never sweep at the same time."""

from __future__ import annotations

import logging
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta

from django.conf import settings
from django.db import connection, transaction

from orchestrator.agents.services import agents_sweep
from orchestrator.audit.checkpoints import audit_checkpoint_sweep
from orchestrator.system.models import SweepState
from orchestrator.webhooks.services import deliveries_sweep, events_dispatch, events_prune
from shared.api.time import now_ms

logger = logging.getLogger(__name__)

RECOVERY = "recovery"
# One advisory lock key per database (PostgreSQL scopes advisory locks to the current database).
LOCK_KEY = zlib.crc32(b"orchestrator.recovery-sweep")


@contextmanager
def recovery_lock() -> Iterator[bool]:
    """Yields whether this connection holds the sweep lock. A session-level advisory lock, not a row
    lock: the sweep commits in many small transactions, and the lock goes with the connection when
    its process dies, so a killed sweeper never blocks the next one. Other databases (SQLite, one
    host) have no such lock; every step of the sweep is a conditional UPDATE, so a rare overlap
    there is harmless."""
    if connection.vendor != "postgresql":
        yield True
        return
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_try_advisory_lock(%s)", [LOCK_KEY])
        held = cursor.fetchone()[0]
    try:
        yield held
    finally:
        if held:
            with connection.cursor() as cursor:
                cursor.execute("SELECT pg_advisory_unlock(%s)", [LOCK_KEY])


@transaction.atomic
def sweep_state_record(*, at: datetime, by: str) -> SweepState:
    """Records a finished sweep (its time and the process that ran it)."""
    state, _ = SweepState.objects.update_or_create(
        name=RECOVERY, defaults={"last_run_at": at, "last_run_by": by}
    )
    return state


def _ran_recently() -> bool:
    last = SweepState.objects.filter(name=RECOVERY).values_list("last_run_at", flat=True).first()
    # a little under the interval, so the sweeper whose turn it is does not just miss it
    return last is not None and now_ms() - last < timedelta(seconds=settings.SWEEP_INTERVAL_SECONDS * 0.8)


def _audit_checkpoints() -> int:
    # A failing checkpoint (a witness's disk full, a bad key) must not stop recovery itself.
    try:
        return audit_checkpoint_sweep()
    except Exception:
        logger.exception("Audit checkpoint in the recovery sweep failed")
        return 0


def recovery_sweep(*, sweeper: str, force: bool = False) -> dict[str, int] | None:
    """Recovers lost task runs, stalled runs and lost wake-ups, re-sends lost webhook events and
    deliveries, signs an audit checkpoint when one is due and deletes outbox events past their
    retention (ORCH_EVENT_RETENTION_DAYS). Returns None when skipped: another process holds the lock, or (unless `force`)
    a sweep finished less than an interval ago, so N agents still sweep once per interval."""
    with recovery_lock() as held:
        if not held or (not force and _ran_recently()):
            return None
        result = agents_sweep()
        while events_dispatch():  # events whose dispatch kick was lost
            pass
        result["webhook_deliveries_resent"] = deliveries_sweep()
        result["audit_checkpoints"] = _audit_checkpoints()
        result["events_pruned"] = events_prune()
        sweep_state_record(at=now_ms(), by=sweeper)
        return result
