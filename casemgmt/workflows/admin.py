"""Workflows and case steps in the Django admin, limited to the administrator's own tenant.

Workflows are viewed here and published or withdrawn with the same services as the API (audited,
same rules: only drafts publish, only published versions withdraw). A draft's name and steps are
edited here too (`workflows:write`), saved through the API's service and checked with the very
checks publishing runs (`publish_errors`: every step type, rework routes, timers, waits, sub-cases),
so the editor refuses what publishing would. Case steps (human tasks included) are read-only."""

from __future__ import annotations

import json
import uuid
from typing import Any, cast

from django import forms
from django.contrib import admin, messages
from django.template.loader import render_to_string
from django.template.response import TemplateResponse
from django.utils.html import format_html
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from casemgmt.accounts.models import Team, TeamMembership, User
from casemgmt.tenancy.admin import ReadOnlyTenantAdmin, TenantScopedAdmin
from casemgmt.workflows.definitions import publish_errors, step_shape_errors
from casemgmt.workflows.diagram import definition_graph
from casemgmt.workflows.models import CaseStep, Workflow
from casemgmt.workflows.services.migration import workflow_migrate
from casemgmt.workflows.services.teams import (
    team_create,
    team_delete,
    team_member_add,
    team_member_remove,
    team_update,
)
from casemgmt.workflows.services.workflows import workflow_publish, workflow_update, workflow_withdraw
from shared.api.errors import ApplicationError
from shared.web.jsonedit import PrettyJSONField


class DraftForm(forms.ModelForm):
    """A draft's name and its steps as JSON (pretty-printed; a syntax error names its line and
    column), refused with the errors publishing would report."""

    steps = PrettyJSONField(
        label=gettext_lazy("steps"),
        help_text=gettext_lazy(
            "The steps as a JSON list (task, agent, connector, dag, timer, wait, case). "
            "Saving checks them as publishing does."
        ),
    )

    class Meta:
        model = Workflow
        fields = ("name",)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["steps"].initial = (self.instance.definition or {}).get("steps") or []

    def clean_steps(self) -> list[Any]:
        steps = self.cleaned_data["steps"]
        definition = {**(self.instance.definition or {}), "steps": steps}
        errors = step_shape_errors(steps) or publish_errors(definition, tenant_id=self.instance.tenant_id)
        if errors:
            raise forms.ValidationError([f"{e['field']}: {e['error']}" for e in errors])
        return list(steps)


class MigrateForm(forms.Form):
    """What `POST /workflows/{id}/migrate` takes: the version to move open cases from, how its steps
    map to this version's, and optionally which cases (all of that version's open cases otherwise)."""

    fromVersion = forms.TypedChoiceField(label=gettext_lazy("From version"), coerce=int)
    stepMapping = PrettyJSONField(
        label=gettext_lazy("Step mapping (JSON: old step id → new step id)"), required=False, initial=dict
    )
    caseIds = forms.CharField(
        label=gettext_lazy("Case ids (optional, one per line)"),
        required=False,
        widget=forms.Textarea(attrs={"rows": 4}),
    )

    def __init__(self, *args: Any, workflow: Workflow, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        versions = (
            Workflow.objects.filter(tenant_id=workflow.tenant_id, case_type_key=workflow.case_type_key)
            .exclude(pk=workflow.pk)
            .order_by("version")
            .values_list("version", flat=True)
        )
        source = cast(forms.TypedChoiceField, self.fields["fromVersion"])  # declared above
        source.choices = [(v, str(v)) for v in versions]
        self.fields["stepMapping"].widget.attrs["rows"] = 8

    def clean_stepMapping(self) -> dict[str, str]:
        mapping = self.cleaned_data.get("stepMapping") or {}
        if not isinstance(mapping, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in mapping.items()
        ):
            raise forms.ValidationError(_("Give an object of old step ids to new step ids."))
        return mapping

    def clean_caseIds(self) -> list[uuid.UUID] | None:
        raw = self.cleaned_data.get("caseIds", "").replace(",", " ").split()
        try:
            return [uuid.UUID(value) for value in raw] or None
        except ValueError:
            raise forms.ValidationError(_("Give case ids (UUIDs), one per line.")) from None


@admin.register(Workflow)
class WorkflowAdmin(ReadOnlyTenantAdmin):
    api_permission = "workflows:read"
    write_permission = "workflows:publish"
    edit_permission = "workflows:write"
    list_display = ("name", "case_type_key", "version", "status", "is_default", "published_at")
    list_filter = ("status", "case_type_key")
    search_fields = ("name", "case_type_key")
    ordering = ("case_type_key", "-version")
    exclude = ("tenant", "definition")
    readonly_fields = ("definition_json", "diagram")
    actions = ("publish", "withdraw", "migrate_cases")

    @admin.display(description=gettext_lazy("definition"))
    def definition_json(self, obj: Workflow) -> str:
        return format_html("<pre>{}</pre>", json.dumps(obj.definition, indent=2, ensure_ascii=False))

    @admin.display(description=gettext_lazy("steps diagram"))
    def diagram(self, obj: Workflow) -> str:
        """The steps as the case console draws them (read-only; a draft's shows what was saved)."""
        graph = definition_graph(obj.definition)
        if graph is None:
            return _("No steps yet.")
        context = {"graph": graph, "graph_label": _("Steps of the workflow"), "graph_id": "workflow"}
        return render_to_string("shared_web/graph.html", context)

    def has_change_permission(self, request: Any, obj: Any = None) -> bool:
        """Drafts of the admin's own tenant, with `workflows:write`; published versions are frozen."""
        return (
            obj is not None
            and obj.status == Workflow.DRAFT
            and bool(request.user.tenant_id)
            and obj.tenant_id == request.user.tenant_id
            and self._is_tenant_admin(request, self.edit_permission)
        )

    def get_form(self, request: Any, obj: Any = None, change: bool = False, **kwargs: Any) -> Any:
        if obj is not None and self.has_change_permission(request, obj):
            kwargs["form"] = DraftForm
            kwargs["fields"] = ("name", "steps")
        return super().get_form(request, obj, change, **kwargs)

    def get_fields(self, request: Any, obj: Any = None) -> Any:
        if obj is not None and self.has_change_permission(request, obj):
            return ("name", "steps", "diagram")
        return super().get_fields(request, obj)

    def get_readonly_fields(self, request: Any, obj: Any = None) -> Any:
        if obj is not None and self.has_change_permission(request, obj):
            return ("diagram",)
        return super().get_readonly_fields(request, obj)

    def save_model(self, request: Any, obj: Workflow, form: Any, change: bool) -> None:
        # Through the API's service (audited `workflow:edited`), never a bare save of the row.
        definition = Workflow.objects.get(pk=obj.pk).definition or {}
        workflow_update(
            user=request.user,
            workflow=obj,
            name=form.cleaned_data["name"],
            steps=form.cleaned_data["steps"],
            auto_close=obj.auto_close,
            sla_hours=obj.sla_hours,
            outcomes=definition.get("outcomes"),
        )

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
                    request,
                    done % {"name": workflow.name, "version": workflow.version},
                    level=messages.SUCCESS,
                )

    @admin.action(description=gettext_lazy("Publish selected drafts"), permissions=["publish"])
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
            context = {
                **self.admin_site.each_context(request),
                "drafts": drafts,
                "title": _("Publish drafts"),
            }
            return TemplateResponse(request, "admin/workflows/workflow/publish_confirmation.html", context)
        self._apply(request, queryset, workflow_publish, _("%(name)s version %(version)s published."))
        return None

    @admin.action(description=gettext_lazy("Withdraw selected published workflows"), permissions=["publish"])
    def withdraw(self, request: Any, queryset: Any) -> None:
        self._apply(request, queryset, workflow_withdraw, _("%(name)s version %(version)s withdrawn."))

    def has_migrate_permission(self, request: Any) -> bool:
        """The API's rule for `POST /workflows/{id}/migrate`: `workflows:*` in the admin's own tenant."""
        user = request.user
        return bool(user.tenant_id) and (user.is_superuser or self._is_tenant_admin(request, "workflows:*"))

    @admin.action(description=gettext_lazy("Migrate open cases to this version"), permissions=["migrate"])
    def migrate_cases(self, request: Any, queryset: Any) -> Any:
        """Asks what to move (a small form), then moves the cases with the API's service and says
        how many moved and why each other one did not."""
        workflows = list(queryset[:2])
        if len(workflows) != 1 or workflows[0].status != Workflow.PUBLISHED:
            self.message_user(request, _("Choose exactly one published workflow."), level=messages.ERROR)
            return None
        workflow = workflows[0]
        form = MigrateForm(request.POST if "fromVersion" in request.POST else None, workflow=workflow)
        if not form.is_valid():
            context = {
                **self.admin_site.each_context(request),
                "workflow": workflow,
                "form": form,
                "title": _("Migrate open cases"),
            }
            return TemplateResponse(request, "admin/workflows/workflow/migrate_form.html", context)
        try:
            result = workflow_migrate(
                user=request.user,
                workflow=workflow,
                from_version=form.cleaned_data["fromVersion"],
                step_mapping=form.cleaned_data["stepMapping"],
                case_ids=form.cleaned_data["caseIds"],
            )
        except ApplicationError as exc:
            self.message_user(request, f"{workflow}: {exc.message}", level=messages.ERROR)
            return None
        self.message_user(
            request,
            _("%(count)s migrated to %(name)s version %(version)s.")
            % {"count": result.migrated, "name": workflow.name, "version": workflow.version},
            level=messages.SUCCESS,
        )
        if result.failed:
            failures = "; ".join(f"{f['caseId']} {f['code']}: {f['message']}" for f in result.failed)
            self.message_user(
                request,
                _("%(count)s failed: %(failures)s") % {"count": len(result.failed), "failures": failures},
                level=messages.ERROR,
            )
        return None


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

    @admin.display(description=gettext_lazy("case"), ordering="case__case_number")
    def case_number(self, obj: CaseStep) -> str:
        return obj.case.case_number


class TeamMembershipInline(admin.TabularInline):
    """Members are added and removed through the services (audited `team:member_added|removed`)."""

    model = TeamMembership
    fields = ("user", "lead")
    extra = 1

    def _may(self, request: Any, obj: Any = None) -> bool:
        # Tenant admins hold no Django model permissions: the team page's own rule (admin:users) decides.
        return TeamAdmin(Team, self.admin_site).has_change_permission(request, obj)

    def has_view_permission(self, request: Any, obj: Any = None) -> bool:
        return self._may(request, obj)

    has_add_permission = has_change_permission = has_delete_permission = has_view_permission

    def formfield_for_foreignkey(self, db_field: Any, request: Any, **kwargs: Any) -> Any:
        if db_field.name == "user" and not request.user.is_superuser:
            kwargs["queryset"] = User.objects.filter(tenant_id=request.user.tenant_id, is_active=True)
        return super().formfield_for_foreignkey(db_field, request, **kwargs)


@admin.register(Team)
class TeamAdmin(TenantScopedAdmin):
    api_permission = "admin:users"
    list_display = ("name", "description", "member_count", "created_at")
    search_fields = ("name",)
    inlines = (TeamMembershipInline,)

    @admin.display(description="Members")
    def member_count(self, obj: Team) -> int:
        return obj.memberships.count()

    def save_model(self, request: Any, obj: Any, form: Any, change: bool) -> None:
        try:
            if change:
                stored = Team.objects.get(pk=obj.pk)
                name, description = obj.name, obj.description
                obj.name, obj.description = stored.name, stored.description
                team_update(actor=request.user, team=obj, name=name, description=description)
            else:
                created = team_create(actor=request.user, name=obj.name, description=obj.description)
                obj.pk, obj.tenant_id, obj.created_at, obj._state.adding = (
                    created.pk,
                    created.tenant_id,
                    created.created_at,
                    False,
                )
        except ApplicationError as exc:
            messages.error(request, exc.message)

    def save_formset(self, request: Any, form: Any, formset: Any, change: bool) -> None:
        team = Team.objects.get(pk=form.instance.pk)
        changed = formset.save(commit=False)  # rows are written by the services below, not here
        try:
            for removed in formset.deleted_objects:
                team_member_remove(actor=request.user, team=team, user_id=removed.user_id)
            for membership in changed:
                team_member_add(
                    actor=request.user, team=team, user_id=membership.user_id, lead=membership.lead
                )
        except ApplicationError as exc:
            messages.error(request, exc.message)

    def delete_model(self, request: Any, obj: Any) -> None:
        try:
            team_delete(actor=request.user, team=obj)
        except ApplicationError as exc:
            messages.error(request, exc.message)
