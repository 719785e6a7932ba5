"""The claim when priorities or pools order a queue.

Agents are Celery workers fed one message per queued task run. Without priorities or pools a
message claims its own task run (the one-statement fast path in runs.claim). Otherwise the
messages of a queue are tokens: a message that cannot or should not take its own task run claims
the queue's best claimable one instead (highest priority, then longest queued), skipping pools
without a free slot. Each message still starts at most one task run, and each queued task run
keeps a message on its way, so nothing is left behind: a task run whose message was spent on
another is claimed by that one's own message later, or woken by a pool slot being freed.
"""

from __future__ import annotations

from django.db import transaction

from orchestrator.definitions.models import Pool
from orchestrator.runs import claim
from orchestrator.runs.models import PENDING, QUEUED, RUNNING, TaskRun
from orchestrator.runs.pools import pool_slots_free
from shared.api.time import now_ms

CANDIDATES = 20  # a claim looks this far down the queue before giving its message up


def task_run_claim_next(
    *, task_run_id: str, attempt: int, agent_id: str, agent_session: str
) -> claim.Execution | None:
    """After the message's own task run was not claimed: the queue's best claimable task run, when
    the queue is ordered by priorities or pools (the message's task run tells: still queued for this
    very message, or prioritized, or pooled). A plain stale or duplicate message claims nothing."""
    row = (
        TaskRun.objects.filter(pk=task_run_id)
        .values_list("queue", "status", "attempts", "priority", "pool")
        .first()
    )
    if row is None:
        return None
    queue, status, attempts, priority, pool = row
    if not (status == QUEUED and attempts == attempt) and priority == 0 and not pool:
        return None
    full: set[str] = set()  # pools found without a free slot
    for candidate, attempts, candidate_pool in _candidates(queue):
        if candidate_pool in full:
            continue
        claimed = _claim_one(
            candidate, attempts, candidate_pool, full, agent_id=agent_id, agent_session=agent_session
        )
        if claimed is not None:
            return claim.task_run_after_claim(claimed)
    return None


def _candidates(queue: str) -> list[tuple[str, int, str | None]]:
    return list(
        TaskRun.objects.filter(queue=queue, status=QUEUED, run__status__in=(PENDING, RUNNING))
        .exclude(not_before__gt=now_ms())
        .order_by("-priority", "queued_at", "id")
        .values_list("id", "attempts", "pool")[:CANDIDATES]
    )


def _claim_one(
    task_run_id: str, attempts: int, pool: str | None, full: set[str], *, agent_id: str, agent_session: str
) -> tuple[claim.Execution, str] | None:
    """The conditional claim of one candidate; a pool without a free slot is added to `full`."""
    if not pool:
        return claim.task_run_claim_row(task_run_id=task_run_id, attempt=attempts, agent_id=agent_id,
                                   agent_session=agent_session, guarded=False)  # fmt: skip
    with transaction.atomic():
        # The pool's row lock serializes its claims: the count of its running task runs cannot
        # change between the check and the claim, so the slots are never exceeded.
        row = Pool.objects.select_for_update().filter(pk=pool).first()
        if row is not None and pool_slots_free(row) <= 0:
            full.add(pool)
            return None
        return claim.task_run_claim_row(task_run_id=task_run_id, attempt=attempts, agent_id=agent_id,
                                   agent_session=agent_session, guarded=False)  # fmt: skip
