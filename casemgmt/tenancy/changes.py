"""How tenancy's audited writes (branding, terminology, themes, settings) reach the audit trail.

Tenancy is the lowest app: audit rows belong to a tenant, and the audit app uses tenancy's row-level
security, task context and admin classes, so tenancy cannot import audit. The audit app registers
its recorder here when Django loads the apps (`AuditConfig.ready`). A tenancy write calls it in its
own transaction, exactly as a direct call would; with no recorder registered it fails rather than
change a tenant's settings without an audit row.
"""

from __future__ import annotations

from typing import Any, Protocol

from django.core.exceptions import ImproperlyConfigured


class Actor(Protocol):
    """Who made a change: a signed-in user (tenancy does not import the user model, which sits above)."""

    @property
    def id(self) -> Any: ...


class Recorder(Protocol):
    def __call__(
        self, *, tenant_id: Any, actor: str, action: str, resource: str, changes: dict[str, Any] | None = None
    ) -> object: ...


_recorders: list[Recorder] = []


def recorder_register(recorder: Recorder) -> None:
    _recorders[:] = [recorder]


def record(*, tenant_id: Any, actor: str, action: str, resource: str, changes: dict[str, Any] | None) -> None:
    if not _recorders:
        raise ImproperlyConfigured("No audit recorder is registered: is casemgmt.audit installed?")
    _recorders[0](tenant_id=tenant_id, actor=actor, action=action, resource=resource, changes=changes)
