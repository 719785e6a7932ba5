"""Workflows and case steps in the Django admin, limited to the administrator's own tenant.

Workflows are viewed here and published or withdrawn with the same services as the API (audited,
same rules: only drafts publish, only published versions withdraw). Definitions are edited through
the API; case steps (human tasks included) are read-only."""

from __future__ import annotations

import json
from typing import Any

from django.contrib import admin, messages
from django.template.response import TemplateResponse
from django.utils.html import format_html

from casemgmt.tenancy.admin import ReadOnlyTenantAdmin
from casemgmt.workflows.models import CaseStep, Workflow
from casemgmt.workflows.services.workflows import workflow_publish, workflow_withdraw
from shared.api.errors import ApplicationError


@admin.register(Workflow)
class WorkflowAdmin(ReadOnlyTenantAdmin):
    api_permission = "workflows:read"
    write_permission = "workflows:publish"
    list_display = ("name", "case_type_key", "version", "status", "is_default", "published_at")
    list_filter = ("status", "case_type_key")
    search_fields = ("name", "case_type_key")
    ordering = ("case_type_key", "-version")
    exclude = ("tenant", "definition")
    readonly_fields = ("definition_json",)
    actions = ("publish", "withdraw")

    @admin.display(description="definition")
    def definition_json(self, obj: Workflow) -> str:
        return format_html("<pre>{}</pre>", json.dumps(obj.definition, indent=2, ensure_ascii=False))

    def has_publish_permission(self, request: Any) -> bool:
        return bool(request.user.tenant_id) and self._may_write(request)

    def _apply(self, request: Any, queryset: Any, service: Any, done: str) -> None:
        for workflow in queryset:
            try:
                service(user=request.user, workflow=workflow)
            except ApplicationError as exc:
                self.message_user(request, f"{workflow}: {exc.message}", level=messages.ERROR)
            else:
                self.message_user(
                    request, f"{workflow.name} version {workflow.version} {done}.", level=messages.SUCCESS
                )

    @admin.action(description="Publish selected drafts", permissions=["publish"])
    def publish(self, request: Any, queryset: Any) -> Any:
        """Publishing makes the version the case type's default, so the admin confirms first on a
        page that says which version each draft replaces."""
        if request.POST.get("confirmed") != "yes":
            drafts = list(queryset.order_by("case_type_key", "version"))
            for draft in drafts:
                current = (
                    Workflow.objects.filter(
                        tenant_id=draft.tenant_id, case_type_key=draft.case_type_key, is_default=True
                    )
                    .exclude(pk=draft.pk)
                    .values_list("version", flat=True)
                    .first()
                )
                draft.replaces = current
            context = {**self.admin_site.each_context(request), "drafts": drafts, "title": "Publish drafts"}
            return TemplateResponse(request, "admin/workflows/workflow/publish_confirmation.html", context)
        self._apply(request, queryset, workflow_publish, "published")
        return None

    @admin.action(description="Withdraw selected published workflows", permissions=["publish"])
    def withdraw(self, request: Any, queryset: Any) -> None:
        self._apply(request, queryset, workflow_withdraw, "withdrawn")


@admin.register(CaseStep)
class CaseStepAdmin(ReadOnlyTenantAdmin):
    """Every step of every case; `is_task` narrows it to human tasks."""

    api_permission = "tasks:read"
    list_display = ("case_number", "step_id", "name", "type", "status", "assigned_to", "due_at")
    list_filter = ("is_task", "status", "type")
    search_fields = ("case__case_number", "step_id", "name")
    list_select_related = ("case", "assigned_to")
    ordering = ("-activated_at",)
    exclude = ("tenant",)

    @admin.display(description="case", ordering="case__case_number")
    def case_number(self, obj: CaseStep) -> str:
        return obj.case.case_number
