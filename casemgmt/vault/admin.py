"""Documents in the Django admin: read-only, per case, limited to the administrator's tenant."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.utils.translation import gettext_lazy

from casemgmt.cases.models import Case
from casemgmt.tenancy.admin import ReadOnlyTenantAdmin
from casemgmt.vault.models import Document, Erasure


class CaseFilter(admin.SimpleListFilter):
    """Only the cases of the administrator's own tenant that have documents."""

    title = "case"
    parameter_name = "case"

    def lookups(self, request: Any, model_admin: Any) -> list[tuple[str, str]]:
        cases = Case.objects.filter(documents__isnull=False).distinct().order_by("-created_at")
        if not request.user.is_superuser:
            cases = cases.filter(tenant_id=request.user.tenant_id)
        return [(str(c.id), f"{c.case_number} {c.display_name}") for c in cases[:200]]

    def queryset(self, request: Any, queryset: Any) -> Any:
        return queryset.filter(case_id=self.value()) if self.value() else queryset


@admin.register(Document)
class DocumentAdmin(ReadOnlyTenantAdmin):
    """Documents change only through the API (upload, delete), which audits every action."""

    api_permission = "vault:read"
    list_display = ("filename", "case_number", "mime_type", "size", "uploaded_at", "uploaded_by")
    list_filter = (CaseFilter,)
    search_fields = ("filename", "case__case_number")
    list_select_related = ("case", "uploaded_by")
    ordering = ("-uploaded_at",)
    readonly_fields = (
        "id", "case", "filename", "mime_type", "size", "description", "blob", "uploaded_at", "uploaded_by",
    )  # fmt: skip
    exclude = ("tenant",)

    @admin.display(description=gettext_lazy("case"), ordering="case__case_number")
    def case_number(self, obj: Document) -> str:
        return obj.case.case_number if obj.case else "—"


@admin.register(Erasure)
class ErasureAdmin(ReadOnlyTenantAdmin):
    """Read-only view of erasure jobs and their reports; jobs are requested through the API."""

    api_permission = "admin:erasure"
    list_display = ("id", "scope", "status", "subject_id", "requested_at", "completed_at")
    list_filter = ("status", "scope")
    ordering = ("-requested_at",)
    exclude = ("tenant",)
    readonly_fields = (
        "id", "subject", "requested_by", "scope", "reason", "status", "attempt", "heartbeat_at",
        "steps_done", "counts", "cases_touched", "report", "error", "requested_at", "completed_at",
    )  # fmt: skip
