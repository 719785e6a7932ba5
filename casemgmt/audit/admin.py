"""The audit trail in the Django admin: read-only, the administrator's own tenant's chain only,
with a verify action that checks the hash chain and its signed checkpoints exactly as
`GET /audit/verify-chain` does (and, like it, records the verification as an audit event)."""

from __future__ import annotations

import uuid
from typing import Any

from django.contrib import admin, messages
from django.contrib.auth import get_user_model
from django.core.exceptions import PermissionDenied
from django.http import HttpResponseNotAllowed, HttpResponseRedirect
from django.urls import path, reverse
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy, ngettext

from casemgmt.audit import checkpoints, services
from casemgmt.audit.models import AuditEvent
from casemgmt.tenancy.admin import ReadOnlyTenantAdmin


@admin.register(AuditEvent)
class AuditEventAdmin(ReadOnlyTenantAdmin):
    api_permission = "admin:audit"
    list_display = ("sequence", "timestamp", "actor_name", "action", "resource", "erased")
    list_filter = ("action",)
    search_fields = ("action", "resource", "actor")
    ordering = ("-sequence",)
    exclude = ("tenant",)
    actions = ("verify_selected",)

    def get_changelist_instance(self, request: Any) -> Any:
        """The page's actors by name, read once for the page (not once per row)."""
        changelist = super().get_changelist_instance(request)
        self._actor_names = _actor_names(list(changelist.result_list))
        return changelist

    @admin.display(description="actor", ordering="actor")
    def actor_name(self, obj: AuditEvent) -> str:
        """A person's display name (else email) with the id kept for search; other actors (the
        system, a connector) as recorded."""
        name = getattr(self, "_actor_names", {}).get((str(obj.actor), str(obj.tenant_id)))
        return f"{name} ({obj.actor})" if name else str(obj.actor)

    def _may_verify(self, request: Any) -> bool:
        # Verification is recorded in the verifier's own tenant chain: superusers have none.
        return bool(request.user.tenant_id) and self._is_tenant_admin(request)

    def has_verify_permission(self, request: Any) -> bool:
        return self._may_verify(request)

    def get_urls(self) -> list[Any]:
        verify = path(
            "verify/", self.admin_site.admin_view(self.verify_chain_view), name="audit_auditevent_verify"
        )
        return [verify, *super().get_urls()]

    def changelist_view(self, request: Any, extra_context: Any = None) -> Any:
        extra_context = {**(extra_context or {}), "can_verify_chain": self._may_verify(request)}
        return super().changelist_view(request, extra_context)

    def verify_chain_view(self, request: Any) -> Any:
        if request.method != "POST":
            return HttpResponseNotAllowed(["POST"])
        if not self._may_verify(request):
            raise PermissionDenied
        result, report = checkpoints.verify_tenant_chain_checkpointed(tenant_id=request.user.tenant_id)
        services.audit_record_verification(user=request.user, scope="audit/chain", result=result)
        self._report(request, result, "The audit chain", checkpoints=report)
        return HttpResponseRedirect(reverse("admin:audit_auditevent_changelist"))

    @admin.action(
        description=gettext_lazy("Verify the selected events against the chain"), permissions=["verify"]
    )
    def verify_selected(self, request: Any, queryset: Any) -> None:
        events = queryset.order_by("sequence").iterator()
        result = services.verify_events_in_chain(tenant_id=request.user.tenant_id, events=events)
        services.audit_record_verification(user=request.user, scope="audit/events", result=result)
        self._report(request, result, _("The selected events"))

    def _report(self, request: Any, result: Any, subject: str, checkpoints: Any = None) -> None:
        entries = result.entries_checked
        counted = ngettext("%(count)s entry checked", "%(count)s entries checked", entries) % {
            "count": entries
        }
        if checkpoints is not None:
            signed = checkpoints.checked
            counted += ngettext(
                ", %(count)s signed checkpoint checked", ", %(count)s signed checkpoints checked", signed
            ) % {"count": signed}
        if result.is_valid:
            self.message_user(
                request,
                _("%(subject)s: valid (%(counted)s).") % {"subject": subject, "counted": counted},
                level=messages.SUCCESS,
            )
            return
        detail = "; ".join(result.errors[:5])
        self.message_user(
            request,
            _("%(subject)s: INVALID (%(counted)s). %(detail)s")
            % {"subject": subject, "counted": counted, "detail": detail},
            level=messages.ERROR,
        )


def _actor_names(events: list[AuditEvent]) -> dict[tuple[str, str], str]:
    """(actor id, tenant id) -> name, for actors that are principals of the event's tenant. The
    user model is looked up by name: the audit app sits below accounts and never imports it."""
    wanted = set()
    for event in events:
        try:
            wanted.add(uuid.UUID(str(event.actor)))
        except ValueError:
            continue
    rows = (
        get_user_model().objects.filter(pk__in=wanted).values_list("id", "tenant_id", "display_name", "email")
    )
    return {(str(pk), str(tenant)): name or email for pk, tenant, name, email in rows}
