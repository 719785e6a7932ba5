"""Writes for principals: login, logout and creation."""

from __future__ import annotations

from typing import Any

from django.contrib.auth import authenticate
from django.db import transaction

from casemgmt.accounts.models import Role, User
from casemgmt.accounts.tokens import issue_for, jwt_config
from casemgmt.audit.services import record
from casemgmt.tenancy.models import Tenant
from shared.api import errors
from shared.auth import tokens


def auth_login(*, email: str, password: str) -> tuple[tokens.IssuedToken, User]:
    user = authenticate(email=email, password=password)
    if user is None or user.tenant_id is None or user.kind != User.KIND_HUMAN:
        # The same message whether the email exists or not.
        raise errors.InvalidCredentials("Invalid email or password.")
    return issue_for(user), user


def auth_logout(*, claims: dict[str, Any] | None) -> None:
    if claims:
        tokens.revoke(jwt_config(), claims)


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
) -> User:
    email = email.strip().lower()
    if User.objects.filter(email=email).exists():
        raise errors.AlreadyExists(f"A principal with email {email} already exists.", field="email")
    user = User.objects.create_user(email, password, tenant=tenant, display_name=display_name, kind=kind)
    user.roles.set(roles)
    record(
        tenant_id=tenant.id,
        actor=actor,
        action="user:created",
        resource=f"principals/{user.id}",
        changes={"email": email, "displayName": display_name, "kind": kind, "roles": [r.name for r in roles]},
    )
    return user
