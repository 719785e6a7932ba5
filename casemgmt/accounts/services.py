"""Writes for principals and roles: login, logout, passwords, preferences, administration."""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.conf import settings
from django.contrib.auth import authenticate
from django.contrib.auth.password_validation import validate_password
from django.contrib.auth.tokens import default_token_generator
from django.core.exceptions import ValidationError
from django.core.mail import EmailMessage
from django.db import IntegrityError, transaction
from django.db.models import F
from django.utils.encoding import force_bytes, force_str
from django.utils.http import urlsafe_base64_decode, urlsafe_base64_encode

from casemgmt.accounts import lockout, queue
from casemgmt.accounts.authentication import forget_cached_principals
from casemgmt.accounts.hooks import DISABLE_HOOKS
from casemgmt.accounts.models import KNOWN_PERMISSIONS, Role, User
from casemgmt.accounts.selectors import preferences_of
from casemgmt.accounts.tokens import API_KEY_LABEL, issue_for, revoke
from casemgmt.audit.services import mark_actor_events_deleted, record
from casemgmt.tenancy.models import Tenant
from shared.api import errors
from shared.auth import apikeys, tokens
from shared.auth.permissions import has_all, is_valid_permission

logger = logging.getLogger(__name__)

# --- authentication -------------------------------------------------------------------------------


def auth_login(*, email: str, password: str, ip: str | None = None) -> tuple[tokens.IssuedToken, User]:
    subjects = lockout.subjects(email=email, ip=ip)
    # 429 while locked out, even with the right password.
    lockout.check(subjects)
    user = authenticate(email=email, password=password)
    if user is None or user.tenant_id is None or user.kind != User.KIND_HUMAN:
        lockout.record_failure(subjects)
        # The same answer whether the email exists or not.
        raise errors.InvalidCredentials("Invalid email or password.")
    lockout.clear_email(email=email)
    return issue_for(user), user


def auth_logout(*, claims: dict[str, Any] | None) -> None:
    if claims:
        revoke(claims)


def _validated_password(password: str, *, user: User, field: str) -> str:
    try:
        validate_password(password, user)
    except ValidationError as exc:
        raise errors.ValidationFailed.from_errors(
            [{"field": field, "error": m} for m in exc.messages]
        ) from None
    return password


def _store_password(user: User, password: str) -> None:
    # decision: a new password revokes every token issued before it (the `gen` claim no longer matches).
    user.set_password(password)
    user.token_generation = F("token_generation") + 1
    user.save(update_fields=["password", "token_generation"])
    user.refresh_from_db(fields=["token_generation"])


@transaction.atomic
def password_change(*, user: User, current_password: str, new_password: str) -> None:
    if not user.check_password(current_password):
        # 401 when the current password is wrong.
        raise errors.InvalidCredentials("The current password is incorrect.", field="currentPassword")
    _store_password(user, _validated_password(new_password, user=user, field="newPassword"))


def password_set_token(user: User) -> str:
    """One-time token for the welcome link: `<uid>.<token>`; invalid once the password changes."""
    return f"{urlsafe_base64_encode(force_bytes(user.pk))}.{default_token_generator.make_token(user)}"


@transaction.atomic
def password_set(*, token: str, new_password: str, uid: str | None = None) -> User:
    if uid is None:
        uid, _, token = token.partition(".")
    invalid = errors.ValidationFailed("The password-setting link is invalid or has expired.", field="token")
    try:
        user_id = force_str(urlsafe_base64_decode(uid))
        user = User.objects.select_for_update(no_key=True).filter(pk=user_id, is_active=True).first()
    except (ValueError, TypeError, ValidationError):
        raise invalid from None
    if user is None or not default_token_generator.check_token(user, token):
        raise invalid
    _store_password(user, _validated_password(new_password, user=user, field="newPassword"))
    return user


@transaction.atomic
def preferences_update(*, user: User, changes: dict[str, Any]) -> dict[str, Any]:
    user = User.objects.select_for_update(no_key=True).get(pk=user.pk)
    user.preferences = {**(user.preferences or {}), **changes}
    user.save(update_fields=["preferences"])
    return preferences_of(user)


# --- principals -----------------------------------------------------------------------------------


@transaction.atomic
def user_create(
    *,
    tenant: Tenant,
    email: str,
    display_name: str,
    roles: list[Role],
    password: str | None = None,
    kind: str = User.KIND_HUMAN,
    actor: str = "system",
    **fields: Any,
) -> User:
    email = email.strip().lower()
    # Emails are unique across tenants because login is by email alone. Inside a tenant's request
    # row-level security hides other tenants' principals, so the unique index is what finds them.
    taken = errors.AlreadyExists(f"A principal with email {email} already exists.", field="email")
    if User.objects.filter(email=email).exists():
        raise taken
    try:
        with transaction.atomic():
            user = User.objects.create_user(
                email, password, tenant=tenant, display_name=display_name, kind=kind, **fields
            )
    except IntegrityError as exc:
        if "email" not in str(exc):
            raise
        raise taken from exc
    user.roles.set(roles)
    record(
        tenant_id=tenant.id,
        actor=actor,
        action="user:created",
        resource=f"principals/{user.id}",
        changes={"email": email, "displayName": display_name, "kind": kind, "roles": [r.name for r in roles]},
    )
    return user


def roles_named(*, tenant: Tenant, names: list[str], field: str = "roles") -> list[Role]:
    found = {role.name: role for role in Role.objects.filter(tenant=tenant, name__in=names)}
    unknown = [name for name in names if name not in found]
    if unknown:
        raise errors.ValidationFailed.from_errors(
            [{"field": field, "error": f"Unknown role {n!r}."} for n in unknown]
        )
    return [found[name] for name in dict.fromkeys(names)]


def grantable_by(actor: User, permissions: list[str]) -> bool:
    """decision: an administrator may hand out (through roles or role edits) only permissions it
    holds itself, so admin:users or admin:roles alone never escalates to `*`. Platform operators
    (superusers, Django admin only) are exempt."""
    return actor.is_superuser or has_all(actor.get_permission_strings(), permissions)


def _ensure_grantable(actor: User, permissions: list[str], *, field: str) -> None:
    if not grantable_by(actor, permissions):
        raise errors.PermissionDenied("You may only grant permissions you hold yourself.", field=field)


def _ensure_roles_grantable(actor: User, roles: list[Role], *, before: Iterable[Role] = ()) -> None:
    # Roles the principal already had are not a new grant (an admin may still rename a user
    # holding a bigger role, or take roles away).
    kept = {role.pk for role in before}
    added = [p for role in roles if role.pk not in kept for p in role.permissions]
    _ensure_grantable(actor, added, field="roles")


@dataclass(frozen=True)
class CreatedPrincipal:
    user: User
    api_key: str | None  # plaintext, for agents only; never stored


@transaction.atomic
def principal_create(
    *,
    tenant: Tenant,
    actor: User,
    email: str,
    display_name: str,
    role_names: list[str],
    kind: str = User.KIND_HUMAN,
    password: str | None = None,
) -> CreatedPrincipal:
    roles = roles_named(tenant=tenant, names=role_names)
    _ensure_roles_grantable(actor, roles)
    if password is not None:
        if kind == User.KIND_AGENT:
            raise errors.ValidationFailed(
                "Agents authenticate with an API key, not a password.", field="password"
            )
        _validated_password(password, user=User(email=email, display_name=display_name), field="password")
    key = apikeys.generate(API_KEY_LABEL) if kind == User.KIND_AGENT else None
    user = user_create(
        tenant=tenant,
        email=email,
        display_name=display_name,
        roles=roles,
        password=password,
        kind=kind,
        actor=str(actor.id),
        api_key_hash=key.hashed if key else None,
        api_key_prefix=key.prefix if key else "",
    )
    if kind == User.KIND_HUMAN:
        _queue_welcome(user)
    return CreatedPrincipal(user=user, api_key=key.plaintext if key else None)


def _queue_welcome(user: User) -> None:
    user_id = str(user.id)
    transaction.on_commit(lambda: queue.enqueue_welcome_email(user_id))


@transaction.atomic
def principal_created_in_admin(*, user: User, actor: User) -> None:
    """Django admin saves the row itself; this adds what the API's creation does: audit and welcome."""
    if user.tenant_id is None:
        return  # platform operators have no tenant, hence no tenant audit chain
    record(
        tenant_id=user.tenant_id,
        actor=str(actor.id),
        action="user:created",
        resource=f"principals/{user.id}",
        changes={
            "email": user.email,
            "displayName": user.display_name,
            "kind": user.kind,
            "roles": user.role_names,
        },
    )
    if user.kind == User.KIND_HUMAN:
        _queue_welcome(user)


# Principals are members of a tenant; only platform operators (superusers, who use the Django admin
# alone) have none, and no principal operation reaches them.
@transaction.atomic
def principal_update(
    *, user: User, actor: User, display_name: str | None = None, role_names: list[str] | None = None
) -> User:
    resource = f"principals/{user.id}"
    if display_name is not None and display_name != user.display_name:
        record(
            tenant_id=user.member_tenant_id,
            actor=str(actor.id),
            action="user:updated",
            resource=resource,
            changes={"displayName": {"from": user.display_name, "to": display_name}},
        )
        user.display_name = display_name
        user.save(update_fields=["display_name"])
    if role_names is not None:
        before = sorted(user.role_names)
        roles = roles_named(tenant=user.member_tenant, names=role_names)
        _ensure_roles_grantable(actor, roles, before=list(user.roles.all()))
        user.roles.set(roles)
        after = sorted(r.name for r in roles)
        if before != after:
            record(
                tenant_id=user.member_tenant_id,
                actor=str(actor.id),
                action="user:role_assigned",
                resource=resource,
                changes={"roles": {"from": before, "to": after}},
            )
    return User.objects.prefetch_related("roles").get(pk=user.pk)


def _release_tasks(*, user: User, actor: User) -> None:
    # A disabled user's open tasks are reassigned by the workflow's rules (the step's reassignTo):
    # workflows registers that hook (it sits above accounts).
    for hook in DISABLE_HOOKS:
        hook(user=user, actor=str(actor.id))


@transaction.atomic
def principal_disable(*, user: User, actor: User) -> None:
    if user.pk == actor.pk:
        raise errors.InvalidState("You cannot disable your own account.")
    # Conditional update: disabling twice records one event.
    if not User.objects.filter(pk=user.pk, is_active=True).update(is_active=False):
        return
    forget_cached_principals()  # a queryset update sends no signal
    # A disabled principal's audit events are marked deleted, in the same transaction as the disable.
    marked = mark_actor_events_deleted(tenant_id=user.member_tenant_id, actor=str(user.id), deleted=True)
    record(
        tenant_id=user.member_tenant_id,
        actor=str(actor.id),
        action="user:disabled",
        resource=f"principals/{user.id}",
        changes={"auditEventsMarkedDeleted": marked},
    )
    _release_tasks(user=user, actor=actor)


@transaction.atomic
def principal_enable(*, user: User, actor: User) -> None:
    if not User.objects.filter(pk=user.pk, is_active=False).update(is_active=True):
        return
    # Enabling undoes the disable's mark: the principal's events are live again. (Erasure, which
    # zeroes hashes, is the irreversible path.)
    unmarked = mark_actor_events_deleted(tenant_id=user.member_tenant_id, actor=str(user.id), deleted=False)
    record(
        tenant_id=user.member_tenant_id,
        actor=str(actor.id),
        action="user:enabled",
        resource=f"principals/{user.id}",
        changes={"auditEventsUnmarked": unmarked},
    )


def welcome_email_build(user: User) -> EmailMessage:
    tenant = user.member_tenant
    organisation = getattr(getattr(tenant, "branding", None), "company_name", "") or tenant.name
    lines = [
        f"Hello {user.display_name or user.email},",
        "",
        f"An account was created for you at {organisation}.",
    ]
    if not user.has_usable_password():
        link = f"{settings.PUBLIC_BASE_URL.rstrip('/')}/console/password/set?token={password_set_token(user)}"
        lines += ["", "Choose your password with this one-time link:", link]
    lines += ["", f"You log in with {user.email}."]
    return EmailMessage(subject=f"Welcome to {organisation}", body="\n".join(lines), to=[user.email])


# --- roles ----------------------------------------------------------------------------------------


def _validated_permissions(permissions: list[str]) -> list[str]:
    # Permission strings are the known set plus wildcards; anything else is a 400.
    bad = [
        {"field": f"permissions[{i}]", "error": f"Unknown permission {p!r}."}
        for i, p in enumerate(permissions)
        if not is_valid_permission(p, KNOWN_PERMISSIONS)
    ]
    if bad:
        raise errors.ValidationFailed.from_errors(bad)
    return list(dict.fromkeys(permissions))


@transaction.atomic
def role_create(*, tenant: Tenant, actor: User, name: str, display_name: str, permissions: list[str]) -> Role:
    permissions = _validated_permissions(permissions)
    _ensure_grantable(actor, permissions, field="permissions")
    if Role.objects.filter(tenant=tenant, name=name).exists():
        raise errors.AlreadyExists(f"A role named {name!r} already exists.", field="name")
    role = Role.objects.create(tenant=tenant, name=name, display_name=display_name, permissions=permissions)
    record(
        tenant_id=tenant.id,
        actor=str(actor.id),
        action="role:created",
        resource=f"roles/{role.id}",
        changes={"name": name, "displayName": display_name, "permissions": permissions},
    )
    return role


@transaction.atomic
def role_set_permissions(*, role: Role, actor: User, permissions: list[str]) -> Role:
    permissions = _validated_permissions(permissions)
    before = role.permissions
    # Permissions the role already had are not a new grant; only additions need the actor's own.
    _ensure_grantable(actor, [p for p in permissions if p not in before], field="permissions")
    role.permissions = permissions
    role.save(update_fields=["permissions"])
    record(
        tenant_id=role.tenant_id,
        actor=str(actor.id),
        action="role:permissions_changed",
        resource=f"roles/{role.id}",
        changes={"permissions": {"from": before, "to": permissions}},
    )
    return role


# --- out of office --------------------------------------------------------------------------------


@transaction.atomic
def out_of_office_set(
    *, user: User, actor: User, starts: datetime, until: datetime, delegate_to: Any = None
) -> User:
    """Sets `user`'s absence; the delegate must be another active user of the same tenant."""
    if until <= starts:
        raise errors.ValidationFailed("until must be after from", field="until")
    delegate = None
    if delegate_to is not None:
        delegate = (
            User.objects.filter(tenant_id=user.member_tenant_id, id=delegate_to, is_active=True)
            .exclude(id=user.id)
            .first()
        )
        if delegate is None:
            raise errors.ValidationFailed(
                "delegateTo must be another active user of this tenant", field="delegateTo"
            )
    user.away_from, user.away_until, user.away_delegate = starts, until, delegate
    user.save(update_fields=["away_from", "away_until", "away_delegate"])
    record(
        tenant_id=user.member_tenant_id,
        actor=str(actor.id),
        action="user:out_of_office_set",
        resource=f"users/{user.id}",
        changes={"from": starts.isoformat(), "until": until.isoformat(), "delegateTo": _id(delegate)},
    )
    forget_cached_principals()
    return user


@transaction.atomic
def out_of_office_clear(*, user: User, actor: User) -> None:
    if user.away_from is None and user.away_until is None:
        return  # nothing set: an idempotent 204
    user.away_from, user.away_until, user.away_delegate = None, None, None
    user.save(update_fields=["away_from", "away_until", "away_delegate"])
    record(
        tenant_id=user.member_tenant_id,
        actor=str(actor.id),
        action="user:out_of_office_cleared",
        resource=f"users/{user.id}",
        changes={},
    )
    forget_cached_principals()


def _id(user: User | None) -> str | None:
    return str(user.id) if user is not None else None
