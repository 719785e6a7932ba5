"""Ends each request's tenant context (see casemgmt.tenancy.rls)."""

from __future__ import annotations

from collections.abc import Callable

from django.http import HttpRequest
from django.http.response import HttpResponseBase

from casemgmt.tenancy import rls


class RowLevelSecurityMiddleware:
    """Authentication switches the request's connection to its tenant; this switches it back when
    the response is done, so a reused connection (pool, persistent) starts in the system context.
    A streamed body is read after the view returns: its switch back waits for the stream's end."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponseBase]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponseBase:
        rls.leave_tenant()  # a connection left switched by an interrupted stream
        if request.path.startswith("/admin/"):
            _enter_admin_tenant(request)
        try:
            response = self.get_response(request)
        except BaseException:
            rls.end_request()
            raise
        if response.streaming:
            response._resource_closers.append(rls.end_request)  # type: ignore[attr-defined]  # Django runs these on close()
        else:
            rls.end_request()
        return response


def _enter_admin_tenant(request: HttpRequest) -> None:
    """The Django admin authenticates by session: a tenant's staff member works in its tenant's
    context like on the API; platform superusers (no tenant) keep the system context."""
    user = request.user
    tenant_id = getattr(user, "tenant_id", None) if user.is_authenticated else None
    if tenant_id is not None:
        rls.enter_tenant(tenant_id, getattr(user, "rls_teams", ""))
