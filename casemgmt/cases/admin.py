"""Case types and cases in the Django admin, limited to the administrator's own tenant.

Case types are immutable versions: saving one here registers the next version through the same
service as `POST /case-types` (audited); cases are read-only (they change through the API)."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from casemgmt.cases.jsondata import check_schema
from casemgmt.cases.models import Case, CaseType
from casemgmt.cases.services import KEY_RE, PREFIX_RE, case_type_create
from casemgmt.tenancy.admin import ReadOnlyTenantAdmin, VersionedServiceAdmin
from shared.api.errors import ValidationFailed
from shared.web.jsonedit import PrettyJSONField


class CaseTypeAdminForm(forms.ModelForm):
    class Meta:
        model = CaseType
        fields = ("key", "display_name", "description", "schema", "prefix", "sla_hours")
        help_texts = {"prefix": gettext_lazy("Case number prefix; derived from the key when left empty.")}
        labels = {"sla_hours": gettext_lazy("SLA hours")}
        # Pretty-printed and parsed with the line and column of a syntax error; then checked below.
        field_classes = {"schema": PrettyJSONField}

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if "prefix" in self.fields:  # read-only (absent) once the first version exists
            self.fields["prefix"].required = False

    def clean_key(self) -> str:
        key = self.cleaned_data["key"]
        if not KEY_RE.match(key):
            raise forms.ValidationError(_("Use snake_case: a-z, 0-9 and _, starting with a letter."))
        return key

    def clean_prefix(self) -> str:
        prefix = self.cleaned_data.get("prefix") or ""
        if prefix and not PREFIX_RE.match(prefix):
            raise forms.ValidationError(_("2 to 8 characters of A-Z and 0-9."))
        return prefix

    def clean_schema(self) -> Any:
        schema = self.cleaned_data.get("schema")
        try:
            check_schema(schema)
        except ValidationFailed as exc:
            raise forms.ValidationError(
                [f"{e['field']}: {e['error']}" if e.get("field") else e["error"] for e in exc.errors]
                or exc.message
            ) from None
        return schema


@admin.register(CaseType)
class CaseTypeAdmin(VersionedServiceAdmin):
    api_permission = "cases:read"
    write_permission = "admin:case_types"
    form = CaseTypeAdminForm
    list_display = ("key", "version", "display_name", "prefix", "created_at")
    search_fields = ("key", "display_name")
    ordering = ("key", "-version")

    def get_readonly_fields(self, request: Any, obj: Any = None) -> Any:
        # A new version keeps its key, and numbering continues under the same prefix.
        return ("key", "prefix", "version", "created_at", "created_by") if obj else ()

    def register_version(self, request: Any, obj: CaseType, change: bool) -> CaseType:
        return case_type_create(
            user=request.user,
            key=obj.key,
            display_name=obj.display_name,
            description=obj.description,
            schema=obj.schema,
            prefix=None if change else (obj.prefix or None),
            sla_hours=obj.sla_hours,
        )


@admin.register(Case)
class CaseAdmin(ReadOnlyTenantAdmin):
    api_permission = "cases:read"
    list_display = ("case_number", "display_name", "case_type", "status", "created_at", "closed_at")
    list_filter = ("status",)
    search_fields = ("case_number", "display_name")
    list_select_related = ("case_type",)
    ordering = ("-created_at",)
    exclude = ("tenant",)
