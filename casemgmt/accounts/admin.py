from __future__ import annotations

from typing import Any

from django.contrib import admin

from casemgmt.accounts.models import Role, User
from casemgmt.accounts.services import principal_created_in_admin
from casemgmt.tenancy.admin import TenantScopedAdmin


@admin.register(Role)
class RoleAdmin(TenantScopedAdmin):
    api_permission = "admin:roles"
    list_display = ("name", "display_name", "tenant", "created_at")
    search_fields = ("name", "display_name")


@admin.register(User)
class UserAdmin(TenantScopedAdmin):
    api_permission = "admin:users"
    list_display = ("email", "display_name", "kind", "is_active", "is_staff", "tenant", "created_at")
    list_filter = ("kind", "is_active", "is_staff")
    search_fields = ("email", "display_name")
    filter_horizontal = ("roles",)
    readonly_fields = ("api_key_prefix", "created_at", "last_login")
    # Passwords, API keys and Django's own permission tables are never edited here.
    exclude = (
        "password",
        "api_key_hash",
        "groups",
        "user_permissions",
        "preferences",
        "token_generation",
        "welcome_sent_at",
    )

    def get_exclude(self, request: Any, obj: Any = None) -> Any:
        excluded = list(super().get_exclude(request, obj))
        return excluded if request.user.is_superuser else [*excluded, "is_superuser"]

    def formfield_for_manytomany(self, db_field: Any, request: Any, **kwargs: Any) -> Any:
        if db_field.name == "roles" and not request.user.is_superuser:
            # Roles of other tenants are never offered.
            kwargs["queryset"] = Role.objects.filter(tenant_id=request.user.tenant_id)
        return super().formfield_for_manytomany(db_field, request, **kwargs)

    def save_model(self, request: Any, obj: Any, form: Any, change: bool) -> None:
        if not change:
            obj.email = obj.email.strip().lower()
            obj.set_unusable_password()  # set through the welcome link or POST /auth/password/set
        super().save_model(request, obj, form, change)

    def save_related(self, request: Any, form: Any, formsets: Any, change: bool) -> None:
        super().save_related(request, form, formsets, change)
        if not change:  # roles are saved by now, so the audit row names them
            principal_created_in_admin(user=form.instance, actor=request.user)
