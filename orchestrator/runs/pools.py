"""Pools: at most `slots` task runs naming a pool run at once.

No counter is kept: the pool's running task runs are counted under the pool's row lock, so every
end state, including a recovery after an agent was killed, frees its slot simply by leaving
`running`; nothing can be left over to release. (A DAG's `max_active_runs` is kept the same way:
runs.state.)
"""

from __future__ import annotations

from orchestrator.definitions.models import Pool
from orchestrator.runs.models import PENDING, QUEUED, RUNNING, TaskRun
from orchestrator.runs.wakeups import Wakeup, send_now
from shared.api.time import now_ms


def pool_slots_free(pool: Pool) -> int:
    return pool.slots - TaskRun.objects.filter(pool=pool.name, status=RUNNING).count()


def pool_wake(*, pool: str) -> int:
    """After a slot may have been freed (a task run of the pool ended) or the pool grew: wakes as
    many of the pool's waiting task runs as there are free slots, best first. A wake-up that finds
    the pool full again is harmless; the sweeper repeats this for a wake-up that was lost."""
    row = Pool.objects.filter(pk=pool).first()
    if row is None:
        return 0
    free = pool_slots_free(row)
    if free <= 0:
        return 0
    waiting = list(
        TaskRun.objects.filter(pool=pool, status=QUEUED, run__status__in=(PENDING, RUNNING))
        .exclude(not_before__gt=now_ms())
        .order_by("-priority", "queued_at", "id")
        .values_list("id", "queue", "attempts")[:free]
    )
    send_now([Wakeup(*row) for row in waiting])
    return len(waiting)


def pools_sweep() -> int:
    """Periodic safety net: every pool with free slots and waiting task runs is woken."""
    names = (
        TaskRun.objects.filter(pool__isnull=False, status=QUEUED).values_list("pool", flat=True).distinct()
    )
    woken = 0
    for name in names:
        woken += pool_wake(pool=name or "")
    return woken
