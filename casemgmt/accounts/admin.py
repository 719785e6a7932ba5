"""Django admin for principals and roles. Saves go through the services, so an edit here records
the same audit events, releases the same tasks and obeys the same rules as the API."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin, messages
from django.contrib.auth.models import Group
from django.contrib.auth.password_validation import validate_password
from django.utils.translation import gettext_lazy as _

from casemgmt.accounts.models import KNOWN_PERMISSIONS, Role, User
from casemgmt.accounts.services import (
    grantable_by,
    out_of_office_clear,
    out_of_office_set,
    principal_created_in_admin,
    principal_disable,
    principal_enable,
    principal_update,
    role_create,
    role_set_permissions,
)
from casemgmt.tenancy.admin import TenantScopedAdmin
from shared.api import errors
from shared.auth.permissions import is_valid_permission

# Access is granted by tenant roles (`Role`), never by Django's groups: nothing here to manage.
admin.site.unregister(Group)


class RoleAdminForm(forms.ModelForm):
    request: Any = None  # set by RoleAdmin.get_form

    def clean_name(self) -> str:
        name = self.cleaned_data["name"]
        tenant_id = self.instance.tenant_id if self.instance.pk else self.request.user.tenant_id
        if (
            tenant_id
            and Role.objects.filter(tenant_id=tenant_id, name=name).exclude(pk=self.instance.pk).exists()
        ):
            raise forms.ValidationError(_("A role named %(name)r already exists.") % {"name": name})
        return name

    def clean_permissions(self) -> list[str]:
        permissions = self.cleaned_data.get("permissions")
        if not isinstance(permissions, list) or not all(isinstance(p, str) for p in permissions):
            raise forms.ValidationError(_("Permissions must be a JSON list of strings."))
        unknown = [p for p in permissions if not is_valid_permission(p, KNOWN_PERMISSIONS)]
        if unknown:
            raise forms.ValidationError(_("Unknown permissions: %(names)s.") % {"names": ", ".join(unknown)})
        before = list(self.instance.permissions or []) if self.instance.pk else []
        if not grantable_by(self.request.user, [p for p in permissions if p not in before]):
            raise forms.ValidationError(_("You may only grant permissions you hold yourself."))
        return permissions


@admin.register(Role)
class RoleAdmin(TenantScopedAdmin):
    api_permission = "admin:roles"
    list_display = ("name", "display_name", "tenant", "created_at")
    search_fields = ("name", "display_name")
    form = RoleAdminForm

    def get_form(self, request: Any, obj: Any = None, change: bool = False, **kwargs: Any) -> Any:
        form = super().get_form(request, obj, change=change, **kwargs)
        return type(form.__name__, (form,), {"request": request})

    def save_model(self, request: Any, obj: Any, form: Any, change: bool) -> None:
        permissions = form.cleaned_data["permissions"]
        if not change:
            tenant = request.user.tenant if not request.user.is_superuser else obj.tenant
            role = role_create(
                tenant=tenant,
                actor=request.user,
                name=obj.name,
                display_name=obj.display_name,
                permissions=permissions,
            )
            obj.pk, obj.tenant_id, obj._state.adding = role.pk, role.tenant_id, False
            return
        stored = Role.objects.get(pk=obj.pk)
        obj.permissions = stored.permissions  # changed only through the service, audited
        super().save_model(request, obj, form, change)
        if sorted(permissions) != sorted(stored.permissions):
            role_set_permissions(role=obj, actor=request.user, permissions=permissions)


class UserAdminForm(forms.ModelForm):
    request: Any = None  # set by UserAdmin.get_form

    def clean_is_active(self) -> bool:
        active = self.cleaned_data["is_active"]
        if not active and self.instance.pk and self.instance.pk == self.request.user.pk:
            raise forms.ValidationError(_("You cannot disable your own account."))
        return active

    def clean_roles(self) -> Any:
        roles = self.cleaned_data.get("roles")
        kept = set(self.instance.roles.values_list("pk", flat=True)) if self.instance.pk else set()
        added = [p for role in roles or [] if role.pk not in kept for p in role.permissions]
        if not grantable_by(self.request.user, added):
            raise forms.ValidationError(_("You may only assign roles whose permissions you hold yourself."))
        return roles


INVITE, INITIAL_PASSWORD = "invite", "password"


class UserAddForm(UserAdminForm):
    """Adding a person: either an invitation (the welcome email carries a one-time link to choose
    a password) or an initial password the admin hands over (the email then only welcomes)."""

    onboarding = forms.ChoiceField(
        label=_("How they get in"),
        choices=[
            (INVITE, _("Invite by email: they choose their own password from the link")),
            (INITIAL_PASSWORD, _("Set an initial password now")),
        ],
        initial=INVITE,
        required=False,  # not chosen: an invitation
        widget=forms.RadioSelect,
    )
    password1 = forms.CharField(
        label=_("Initial password"),
        required=False,
        strip=False,
        widget=forms.PasswordInput(attrs={"autocomplete": "new-password"}),
        help_text=_("Only with “Set an initial password”: at least 12 characters, not a common password."),
    )
    password2 = forms.CharField(
        label=_("Initial password again"),
        required=False,
        strip=False,
        widget=forms.PasswordInput(attrs={"autocomplete": "new-password"}),
    )

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean() or {}
        if cleaned.get("onboarding") != INITIAL_PASSWORD:
            return cleaned
        first, second = cleaned.get("password1") or "", cleaned.get("password2") or ""
        if not first:
            self.add_error("password1", _("Enter the initial password, or choose to invite by email."))
        elif first != second:
            self.add_error("password2", _("The two passwords differ."))
        else:
            probe = User(email=cleaned.get("email") or "", display_name=cleaned.get("display_name") or "")
            try:
                validate_password(first, probe)
            except forms.ValidationError as exc:
                self.add_error("password1", exc)
        return cleaned


@admin.register(User)
class UserAdmin(TenantScopedAdmin):
    api_permission = "admin:users"
    form = UserAdminForm
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

    def get_form(self, request: Any, obj: Any = None, change: bool = False, **kwargs: Any) -> Any:
        if obj is None:
            kwargs["form"] = UserAddForm
        form = super().get_form(request, obj, change=change, **kwargs)
        return type(form.__name__, (form,), {"request": request})

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
            if form.cleaned_data.get("onboarding") == INITIAL_PASSWORD:
                obj.set_password(form.cleaned_data["password1"])
            else:
                obj.set_unusable_password()  # set through the welcome link or POST /auth/password/set
            super().save_model(request, obj, form, change)
            return
        # Active state, display name and out of office change through the services (audit, task
        # release, delegate checks); the rest of the row is saved as edited.
        stored = User.objects.get(pk=obj.pk)
        active, display_name = obj.is_active, obj.display_name
        away = (obj.away_from, obj.away_until, obj.away_delegate_id)
        obj.is_active, obj.display_name = stored.is_active, stored.display_name
        obj.away_from, obj.away_until, obj.away_delegate_id = (
            stored.away_from,
            stored.away_until,
            stored.away_delegate_id,
        )
        super().save_model(request, obj, form, change)
        if obj.tenant_id is not None and away != (
            stored.away_from,
            stored.away_until,
            stored.away_delegate_id,
        ):
            self._save_out_of_office(request, obj, away)
        if obj.tenant_id is None:
            # Platform operators have no tenant audit chain and hold no tasks.
            User.objects.filter(pk=obj.pk).update(is_active=active, display_name=display_name)
        else:
            if display_name != stored.display_name:
                principal_update(user=obj, actor=request.user, display_name=display_name)
            if active != stored.is_active:
                (principal_enable if active else principal_disable)(user=obj, actor=request.user)
        obj.refresh_from_db()

    def _save_out_of_office(self, request: Any, obj: User, away: tuple[Any, Any, Any]) -> None:
        starts, until, delegate_id = away
        try:
            if starts is None or until is None:
                out_of_office_clear(user=obj, actor=request.user)
            else:
                out_of_office_set(
                    user=obj, actor=request.user, starts=starts, until=until, delegate_to=delegate_id
                )
        except errors.ApplicationError as exc:
            messages.error(request, exc.message)

    def formfield_for_foreignkey(self, db_field: Any, request: Any, **kwargs: Any) -> Any:
        if db_field.name == "away_delegate" and not request.user.is_superuser:
            kwargs["queryset"] = User.objects.filter(tenant_id=request.user.tenant_id, is_active=True)
        return super().formfield_for_foreignkey(db_field, request, **kwargs)

    def save_related(self, request: Any, form: Any, formsets: Any, change: bool) -> None:
        if change and form.instance.tenant_id is not None and "roles" in form.cleaned_data:
            # Role changes go through the service, which records user:role_assigned.
            roles = form.cleaned_data.pop("roles")
            principal_update(user=form.instance, actor=request.user, role_names=[r.name for r in roles])
            super().save_related(request, form, formsets, change)
            return
        super().save_related(request, form, formsets, change)
        if not change:  # roles are saved by now, so the audit row names them
            principal_created_in_admin(user=form.instance, actor=request.user)
