"""Django admin for tenant administrators: every model is filtered to the admin's own tenant.

A tenant administrator is an active `is_staff` user with a tenant; what it may do on each model follows
its API permissions (`admin:tenant` for tenant settings, `admin:users`, `admin:roles`). Superusers
(platform operators, usually without a tenant) see and edit every tenant's rows.
"""

from __future__ import annotations

from typing import Any

from django.contrib import admin

from casemgmt.tenancy.models import Branding, Tenant, Terminology, Theme
from shared.auth.permissions import has_permission

# Unknown /admin/... paths answer the API's JSON 404 instead of redirecting to the admin login.
admin.site.final_catch_all_view = False


class TenantScopedAdmin(admin.ModelAdmin):
    api_permission = "admin:tenant"
    tenant_field = "tenant"

    def _is_tenant_admin(self, request: Any) -> bool:
        user = request.user
        if not (user.is_active and user.is_staff and getattr(user, "tenant_id", None)):
            return False
        return has_permission(user.get_permission_strings(), self.api_permission)

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


@admin.register(Branding)
class BrandingAdmin(TenantScopedAdmin):
    list_display = ("company_name", "tenant", "updated_at")

    def has_add_permission(self, request: Any) -> bool:
        return request.user.is_superuser  # one per tenant, created with the tenant


@admin.register(Terminology)
class TerminologyAdmin(TenantScopedAdmin):
    list_display = ("tenant", "updated_at")

    def has_add_permission(self, request: Any) -> bool:
        return request.user.is_superuser


@admin.register(Theme)
class ThemeAdmin(TenantScopedAdmin):
    list_display = ("name", "is_default", "tenant", "created_at")
