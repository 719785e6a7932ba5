"""Row-level security for Celery tasks: every task says which context its queries run in.

- `row_task(Model)`: the task acts on one row, whose id is its first argument. Its body runs in
  that row's tenant context (casemgmt.tenancy.rls.tenant_session), so a query in it that forgets
  its tenant filter still sees only that tenant's rows. The row's tenant is read first, in the
  system context: that one primary-key lookup is all the task does outside its tenant. A row that
  no longer exists gives a context with no tenant, which sees no rows at all.
- `system_task(reason)`: the task must see every tenant (a sweep that selects due rows of all
  tenants) or touches no tenant-owned table. The reason is kept on the task and listed in
  docs/decisions.md; per-row work a sweep starts runs in each row's tenant.

tests/casemgmt/isolation/test_background_tenant_context.py fails for a task that says neither.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

from django.db import models

from casemgmt.tenancy import rls

F = TypeVar("F", bound=Callable[..., Any])


def row_tenant(model: type[models.Model], row_id: Any) -> str:
    """The tenant of one row, or "" (no tenant: no rows visible) when there is no such row."""
    tenant_id = model._default_manager.filter(pk=row_id).values_list("tenant_id", flat=True).first()
    return str(tenant_id) if tenant_id is not None else ""


def row_task(model: type[models.Model]) -> Callable[[F], F]:
    def decorate(body: F) -> F:
        @functools.wraps(body)
        def run(row_id: Any, *args: Any, **kwargs: Any) -> Any:
            with rls.tenant_session(row_tenant(model, row_id)):
                return body(row_id, *args, **kwargs)

        run.tenant_row_model = model  # type: ignore[attr-defined]
        return run  # type: ignore[return-value]

    return decorate


def system_task(reason: str) -> Callable[[F], F]:
    def decorate(body: F) -> F:
        body.system_context_reason = reason  # type: ignore[attr-defined]
        return body

    return decorate
