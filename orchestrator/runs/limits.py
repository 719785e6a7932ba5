"""Limits on what runs at once: a DAG's `max_active_runs` (further runs wait `pending`, admitted
when an active one ends) and pools (at most `slots` task runs naming a pool run at once).

Neither keeps a counter: the active runs and the pool's running task runs are counted under a row
lock (the DAG's, the pool's), so every end state, including a recovery after an agent was killed,
frees its place simply by leaving `running`; nothing can be left over to release.
"""

from __future__ import annotations

from django.db import transaction

from orchestrator.definitions.models import Dag, Pool
from orchestrator.runs import lifecycle
from orchestrator.runs.models import OPEN, PENDING, QUEUED, RUNNING, Run, TaskRun
from orchestrator.runs.wakeups import Wakeup, send_now, send_on_commit
from shared.api.time import now_ms


def dag_admit_if_waiting(*, dag_id: str) -> int:
    """After a run of the DAG ended: nothing to do (one indexed read) unless runs wait for room."""
    if not Run.objects.filter(dag_id=dag_id, waiting=True).exists():
        return 0
    return dag_admit_waiting(dag_id=dag_id)


@transaction.atomic
def dag_admit_waiting(*, dag_id: str) -> int:
    """Admits waiting runs of the DAG, highest priority then oldest first, while fewer than
    `max_active_runs` are active (pending and admitted, running or paused). The DAG row's lock
    serializes admissions, then each admitted run is locked (DAG before run, everywhere), so the
    limit holds with any number of schedulers and agents. Returns how many were admitted."""
    dag = Dag.objects.select_for_update().filter(pk=dag_id).first()
    runs = Run.objects.filter(dag_id=dag_id)
    waiting = runs.filter(waiting=True, status__in=OPEN).order_by("-priority", "start_time", "run_id")
    if dag is None or dag.max_active_runs is None:
        room = None  # the limit was lifted (or the DAG deleted): every waiting run goes
    else:
        room = max(dag.max_active_runs - runs.filter(status__in=OPEN, waiting=False).count(), 0)
    admitted = 0
    for run_id in list(waiting.values_list("run_id", flat=True)[:room]):
        run = lifecycle.lock_run(run_id)
        if not run.waiting or run.status not in OPEN:
            continue
        Run.objects.filter(pk=run_id).update(waiting=False)
        run.waiting = False
        send_on_commit(lifecycle.queue_ready(run))
        admitted += 1
    return admitted


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


def dags_sweep() -> int:
    """Periodic safety net: admission for DAGs whose ending run's admission was lost with its process."""
    dag_ids = Run.objects.filter(waiting=True).values_list("dag_id", flat=True).distinct()[:100]
    return sum(dag_admit_waiting(dag_id=dag_id) for dag_id in dag_ids if dag_id)
