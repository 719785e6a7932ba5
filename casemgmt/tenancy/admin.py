"""Django admin for tenant administrators: every model is filtered to the admin's own tenant.

A tenant administrator is an active `is_staff` user with a tenant; what it may do on each model follows
its API permissions (`admin:tenant` for tenant settings, `admin:users`, `admin:roles`). Superusers
(platform operators, usually without a tenant) see and edit every tenant's rows.
"""

from __future__ import annotations

import re
from typing import Any

from django import forms
from django.contrib import admin, messages
from django.http import HttpResponseRedirect
from django.utils.translation import gettext as _

from casemgmt.tenancy import services
from casemgmt.tenancy.models import DEFAULT_TERMINOLOGY, Branding, Tenant, Terminology, Theme
from shared.api.errors import ApplicationError
from shared.auth.permissions import has_permission

HEX_COLOUR = re.compile(r"^#[0-9A-Fa-f]{6}$")

# Unknown /admin/... paths answer the API's JSON 404 instead of redirecting to the admin login.
admin.site.final_catch_all_view = False


# Branding colours that Django admin's own stylesheet reads as CSS variables.
ADMIN_COLOUR_VARIABLES = {"primary": ("--primary", "--header-bg"), "secondary": ("--secondary",)}


def site_context(request: Any) -> dict[str, Any]:
    """The signed-in administrator's tenant branding for every admin page (see ADMIN_CONTEXT)."""
    tenant_id = getattr(request.user, "tenant_id", None)
    branding = Branding.objects.filter(tenant_id=tenant_id).first() if tenant_id else None
    if branding is None:
        return {}
    colours = {k: v for k, v in (branding.colors or {}).items() if isinstance(v, str) and HEX_COLOUR.match(v)}
    variables = [(f"--brand-{k}", v) for k, v in colours.items() if re.match(r"^[A-Za-z0-9-]{1,40}$", k)]
    for key, names in ADMIN_COLOUR_VARIABLES.items():
        variables += [(name, colours[key]) for name in names if key in colours]
    return {"admin_company": branding.company_name, "admin_css_variables": variables}


class TenantScopedAdmin(admin.ModelAdmin):
    api_permission = "admin:tenant"
    # The permission that writes need, when it differs from the one that lets a tenant admin look.
    write_permission: str | None = None
    tenant_field = "tenant"

    def _is_tenant_admin(self, request: Any, permission: str | None = None) -> bool:
        user = request.user
        if not (user.is_active and user.is_staff and getattr(user, "tenant_id", None)):
            return False
        return has_permission(user.get_permission_strings(), permission or self.api_permission)

    def _may_write(self, request: Any) -> bool:
        return request.user.is_superuser or self._is_tenant_admin(
            request, self.write_permission or self.api_permission
        )

    def has_module_permission(self, request: Any) -> bool:
        return request.user.is_superuser or self._is_tenant_admin(request)

    def has_view_permission(self, request: Any, obj: Any = None) -> bool:
        return self.has_module_permission(request) and self._owns(request, obj)

    has_change_permission = has_view_permission

    def has_add_permission(self, request: Any) -> bool:
        return self.has_module_permission(request)

    def has_delete_permission(self, request: Any, obj: Any = None) -> bool:
        return self.has_module_permission(request) and self._owns(request, obj)

    def _owns(self, request: Any, obj: Any) -> bool:
        return (
            obj is None
            or request.user.is_superuser
            or getattr(obj, f"{self.tenant_field}_id") == request.user.tenant_id
        )

    def get_queryset(self, request: Any) -> Any:
        queryset = super().get_queryset(request)
        if request.user.is_superuser:
            return queryset
        return queryset.filter(**{f"{self.tenant_field}_id": request.user.tenant_id})

    def get_exclude(self, request: Any, obj: Any = None) -> Any:
        # A tenant admin never chooses the tenant: it is always its own.
        excluded = list(super().get_exclude(request, obj) or [])
        return excluded if request.user.is_superuser else [*excluded, self.tenant_field]

    def save_model(self, request: Any, obj: Any, form: Any, change: bool) -> None:
        if not request.user.is_superuser:
            setattr(obj, f"{self.tenant_field}_id", request.user.tenant_id)
        super().save_model(request, obj, form, change)


class ReadOnlyTenantAdmin(TenantScopedAdmin):
    """Rows a tenant admin inspects here; they change only through the API, which audits them."""

    def has_add_permission(self, request: Any) -> bool:
        return False

    def has_change_permission(self, request: Any, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: Any, obj: Any = None) -> bool:
        return False


class ServiceWriteAdmin(TenantScopedAdmin):
    """Adds and changes go through the services (so they are validated and audited like the API),
    as the signed-in tenant admin. A service's refusal is shown on the form's page, never a 500.

    Platform superusers have no tenant of their own to act in: they look, tenant admins write."""

    def has_add_permission(self, request: Any) -> bool:
        return bool(request.user.tenant_id) and self._may_write(request)

    def has_change_permission(self, request: Any, obj: Any = None) -> bool:
        return bool(request.user.tenant_id) and self._may_write(request) and self._owns(request, obj)

    def has_delete_permission(self, request: Any, obj: Any = None) -> bool:
        return False

    def changeform_view(
        self, request: Any, object_id: str | None = None, form_url: str = "", extra_context: Any = None
    ) -> Any:
        try:
            return super().changeform_view(request, object_id, form_url, extra_context)
        except ApplicationError as exc:  # the whole change rolled back with it
            self.message_user(request, exc.message, level=messages.ERROR)
            return HttpResponseRedirect(request.get_full_path())


class VersionedServiceAdmin(ServiceWriteAdmin):
    """Rows that are immutable versions: a save registers the next version through the service
    (`register_version`), the edited row stays as it was, and the admin goes on with the new one."""

    def register_version(self, request: Any, obj: Any, change: bool) -> Any:
        raise NotImplementedError

    def save_model(self, request: Any, obj: Any, form: Any, change: bool) -> None:
        created = self.register_version(request, obj, change)
        obj.pk, obj.version, obj.tenant_id = created.pk, created.version, created.tenant_id
        obj._state.adding = False

    def response_change(self, request: Any, obj: Any) -> Any:
        self.message_user(
            request, _("Registered %(object)s; earlier versions are unchanged.") % {"object": obj}
        )
        return super().response_change(request, obj)


@admin.register(Tenant)
class TenantAdmin(admin.ModelAdmin):
    list_display = ("name", "id", "created_at")
    search_fields = ("name",)

    # Only platform operators manage tenants themselves.
    def has_module_permission(self, request: Any) -> bool:
        return request.user.is_active and request.user.is_superuser

    has_view_permission = has_change_permission = has_delete_permission = lambda self, request, obj=None: (
        request.user.is_active and request.user.is_superuser
    )
    has_add_permission = lambda self, request: request.user.is_active and request.user.is_superuser  # noqa: E731


class _RequestForm(forms.ModelForm):
    request: Any = None  # set by _ServiceBackedAdmin.get_form


class _ServiceBackedAdmin(TenantScopedAdmin):
    """Tenant settings edited here go through the tenancy services (audit, default-theme rules)."""

    def get_form(self, request: Any, obj: Any = None, change: bool = False, **kwargs: Any) -> Any:
        form = super().get_form(request, obj, change=change, **kwargs)
        return type(form.__name__, (form,), {"request": request})


class BrandingAdminForm(_RequestForm):
    def clean_colors(self) -> dict[str, str]:
        colors = self.cleaned_data.get("colors")
        if not isinstance(colors, dict) or not all(
            isinstance(v, str) and HEX_COLOUR.match(v) for v in colors.values()
        ):
            raise forms.ValidationError(_('Colours must be a JSON object of "#RRGGBB" strings.'))
        return {key: value.lower() for key, value in colors.items()}


@admin.register(Branding)
class BrandingAdmin(_ServiceBackedAdmin):
    list_display = ("company_name", "tenant", "updated_at")
    form = BrandingAdminForm

    def has_add_permission(self, request: Any) -> bool:
        return request.user.is_superuser  # one per tenant, created with the tenant

    def has_delete_permission(self, request: Any, obj: Any = None) -> bool:
        return request.user.is_superuser  # every tenant keeps its branding

    def save_model(self, request: Any, obj: Any, form: Any, change: bool) -> None:
        if not change:
            super().save_model(request, obj, form, change)
            return
        services.branding_update(
            tenant=obj.tenant,
            actor=request.user,
            changes={
                "company_name": obj.company_name,
                "logo_url": obj.logo_url,
                "favicon_url": obj.favicon_url,
                "powered_by": obj.powered_by,
                "colors": obj.colors,
            },
            replace_colors=True,
        )
        obj.refresh_from_db()


class TerminologyAdminForm(_RequestForm):
    def clean_labels(self) -> dict[str, str]:
        labels = self.cleaned_data.get("labels")
        expected = ", ".join(DEFAULT_TERMINOLOGY)
        if not isinstance(labels, dict) or set(labels) != set(DEFAULT_TERMINOLOGY):
            raise forms.ValidationError(
                _("Labels must be a JSON object with exactly the keys %(keys)s.") % {"keys": expected}
            )
        if not all(isinstance(v, str) and 1 <= len(v) <= 50 for v in labels.values()):
            raise forms.ValidationError(_("Each label is a string of 1 to 50 characters."))
        return labels


@admin.register(Terminology)
class TerminologyAdmin(_ServiceBackedAdmin):
    list_display = ("tenant", "updated_at")
    form = TerminologyAdminForm

    def has_add_permission(self, request: Any) -> bool:
        return request.user.is_superuser

    def has_delete_permission(self, request: Any, obj: Any = None) -> bool:
        return request.user.is_superuser

    def save_model(self, request: Any, obj: Any, form: Any, change: bool) -> None:
        if not change:
            super().save_model(request, obj, form, change)
            return
        services.terminology_replace(tenant=obj.tenant, actor=request.user, labels=obj.labels)
        obj.refresh_from_db()


class ThemeAdminForm(_RequestForm):
    def clean_name(self) -> str:
        name = self.cleaned_data["name"]
        tenant_id = self.instance.tenant_id if self.instance.pk else self.request.user.tenant_id
        if (
            tenant_id
            and Theme.objects.filter(tenant_id=tenant_id, name=name).exclude(pk=self.instance.pk).exists()
        ):
            raise forms.ValidationError(_("A theme named %(name)r already exists.") % {"name": name})
        return name

    def clean_is_default(self) -> bool:
        is_default = self.cleaned_data["is_default"]
        if (
            not is_default
            and self.instance.pk
            and Theme.objects.filter(pk=self.instance.pk, is_default=True).exists()
        ):
            # Every tenant keeps exactly one default theme.
            raise forms.ValidationError(
                _("This is the default theme; make another theme the default instead.")
            )
        return is_default

    def clean_css_variables(self) -> dict[str, str]:
        variables = self.cleaned_data.get("css_variables")
        if not isinstance(variables, dict) or not all(isinstance(v, str) for v in variables.values()):
            raise forms.ValidationError(_("CSS variables must be a JSON object of strings."))
        return variables


@admin.register(Theme)
class ThemeAdmin(_ServiceBackedAdmin):
    list_display = ("name", "is_default", "tenant", "created_at")
    form = ThemeAdminForm

    def has_delete_permission(self, request: Any, obj: Any = None) -> bool:
        # The default theme is never deleted (the API answers 409 for it).
        return super().has_delete_permission(request, obj) and not (obj is not None and obj.is_default)

    def get_actions(self, request: Any) -> Any:
        actions = super().get_actions(request)
        actions.pop("delete_selected", None)  # bulk deletion would skip the default-theme rule
        return actions

    def save_model(self, request: Any, obj: Any, form: Any, change: bool) -> None:
        if change:
            theme = services.theme_update(
                theme=obj,
                actor=request.user,
                name=obj.name,
                css_variables=obj.css_variables,
                is_default=obj.is_default,
            )
        else:
            tenant = request.user.tenant if not request.user.is_superuser else obj.tenant
            theme = services.theme_create(
                tenant=tenant,
                actor=request.user,
                name=obj.name,
                css_variables=obj.css_variables,
                is_default=obj.is_default,
            )
        obj.pk, obj.tenant_id, obj._state.adding = theme.pk, theme.tenant_id, False

    def delete_model(self, request: Any, obj: Any) -> None:
        services.theme_delete(theme=obj, actor=request.user)
