"""Connector configuration in the Django admin, limited to the administrator's own tenant.

Secrets are write-only: the form shows them as "***" (as `GET /connectors/{key}/config` does), and a
"***" saved back keeps the stored value. Saves go through the same service as the API: validated,
encrypted at rest, audited. The encrypted column itself is never shown."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from casemgmt.connectors.models import ConnectorConfig
from casemgmt.connectors.registry import connectors
from casemgmt.connectors.services import connector_config_redacted, connector_config_set
from casemgmt.tenancy.admin import ServiceWriteAdmin
from shared.api.errors import ApplicationError


def _configurable() -> list[tuple[str, str]]:
    return sorted(
        (key, connector.display_name)
        for key, connector in connectors().items()
        if connector.listed and connector.config_keys
    )


class ConnectorConfigAdminForm(forms.ModelForm):
    key = forms.ChoiceField(choices=_configurable)
    config = forms.JSONField(
        help_text=gettext_lazy(
            'A JSON object of the connector\'s settings. Secrets show as "***"; leave them so to keep them.'
        )
    )

    class Meta:
        model = ConnectorConfig
        fields = ("key",)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if self.instance.pk:
            try:
                shown = connector_config_redacted(tenant_id=self.instance.tenant_id, key=self.instance.key)
                self.fields["config"].initial = shown["config"]
            except ApplicationError as exc:  # e.g. stored under a key no longer configured
                self.fields["config"].initial = {}
                self.fields["config"].help_text = f"{exc.message} {self.fields['config'].help_text}"

    def clean_config(self) -> dict[str, Any]:
        config = self.cleaned_data.get("config")
        if not isinstance(config, dict):
            raise forms.ValidationError(_("The configuration must be a JSON object."))
        return config


@admin.register(ConnectorConfig)
class ConnectorConfigAdmin(ServiceWriteAdmin):
    api_permission = "admin:tenant"
    form = ConnectorConfigAdminForm
    list_display = ("key", "updated_at", "updated_by")
    ordering = ("key",)

    def get_readonly_fields(self, request: Any, obj: Any = None) -> Any:
        return ("key", "updated_at", "updated_by") if obj else ()

    def get_fields(self, request: Any, obj: Any = None) -> Any:
        return ("key", "config", "updated_at", "updated_by") if obj else ("key", "config")

    def save_model(self, request: Any, obj: ConnectorConfig, form: Any, change: bool) -> None:
        row = connector_config_set(user=request.user, key=obj.key, config=form.cleaned_data["config"])
        obj.pk, obj.tenant_id, obj._state.adding = row.pk, row.tenant_id, False
