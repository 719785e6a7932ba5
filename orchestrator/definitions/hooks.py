"""What apps above definitions do after a definition changed, once its transaction committed.

Definitions sits below runs and cannot import it; runs registers its reactions here from its
`AppConfig.ready()`: a DAG saved (a raised `max_active_runs` admits runs waiting for room) and a
pool saved (a grown pool wakes task runs waiting for a slot). A hook runs after the commit, as the
services' own on-commit calls did; a hook that is lost (a crash right after the commit) is
repeated by the recovery sweep.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

from django.db import transaction

DAG_SAVED: list[Callable[[str], object]] = []
POOL_SAVED: list[Callable[[str], object]] = []


def on_dag_saved(hook: Callable[[str], object]) -> None:
    if hook not in DAG_SAVED:
        DAG_SAVED.append(hook)


def on_pool_saved(hook: Callable[[str], object]) -> None:
    if hook not in POOL_SAVED:
        POOL_SAVED.append(hook)


def dag_saved(dag_id: str) -> None:
    """Call inside the transaction that saved the DAG: its hooks run after the commit."""
    for hook in DAG_SAVED:
        transaction.on_commit(partial(hook, dag_id))


def pool_saved(name: str) -> None:
    """Call inside the transaction that saved the pool: its hooks run after the commit."""
    for hook in POOL_SAVED:
        transaction.on_commit(partial(hook, name))
