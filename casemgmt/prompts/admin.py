"""Prompt templates in the Django admin, limited to the administrator's own tenant.

Every version is kept: adding a template registers version 1 and saving one registers the next
version, through the same services as the API (audited); earlier versions never change."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin

from casemgmt.prompts.models import PromptTemplate
from casemgmt.prompts.services import (
    prompt_template_check,
    prompt_template_create,
    prompt_template_new_version,
)
from casemgmt.tenancy.admin import VersionedServiceAdmin
from shared.api.errors import ValidationFailed


class PromptTemplateAdminForm(forms.ModelForm):
    class Meta:
        model = PromptTemplate
        fields = ("name", "description", "template", "model", "temperature", "max_tokens")

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean() or {}
        name = cleaned.get("name", self.instance.name)
        try:
            prompt_template_check(name or "", cleaned.get("template") or "")
        except ValidationFailed as exc:
            for error in exc.errors:
                field = error["field"] if error["field"] in self.fields else None
                self.add_error(field, error["error"])
        return cleaned


@admin.register(PromptTemplate)
class PromptTemplateAdmin(VersionedServiceAdmin):
    api_permission = "agents:read"
    write_permission = "agents:write"
    form = PromptTemplateAdminForm
    list_display = ("name", "version", "model", "created_at")
    search_fields = ("name", "description")
    ordering = ("name", "-version")

    def get_readonly_fields(self, request: Any, obj: Any = None) -> Any:
        return ("name", "version", "created_at", "created_by") if obj else ()

    def register_version(self, request: Any, obj: PromptTemplate, change: bool) -> PromptTemplate:
        service = prompt_template_new_version if change else prompt_template_create
        return service(
            user=request.user,
            name=obj.name,
            template=obj.template,
            description=obj.description,
            model=obj.model,
            temperature=obj.temperature,
            max_tokens=obj.max_tokens,
        )
