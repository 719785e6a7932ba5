"""API keys (created with `create_api_key`, shown once, stored hashed, revocable)."""

from __future__ import annotations

from django.contrib.auth.models import User
from django.db import transaction
from django.utils import timezone

from orchestrator.audit.services import SYSTEM_ACTOR, record
from orchestrator.security.models import ApiKey
from orchestrator.security.principals import API_KEY_LABEL, ROLES
from shared.api import errors
from shared.auth import apikeys


@transaction.atomic
def api_key_create(*, name: str, role: str, actor: str = SYSTEM_ACTOR) -> tuple[ApiKey, str]:
    """Returns the row and the plaintext key; the plaintext is never stored."""
    if role not in ROLES:
        raise errors.ValidationFailed(f"role must be one of {', '.join(ROLES)}", field="role")
    if not name.strip():
        raise errors.ValidationFailed("name must not be empty", field="name")
    if ApiKey.objects.filter(name=name).exists():
        raise errors.AlreadyExists(f"An API key named {name!r} already exists.")
    new = apikeys.generate(API_KEY_LABEL)
    key = ApiKey.objects.create(name=name, role=role, prefix=new.prefix, key_hash=new.hashed)
    # The key's value (and its hash) never enters the trail.
    record(actor=actor, action="api_key.created", resource=f"api-keys/{name}", changes={"role": role})
    return key, new.plaintext


@transaction.atomic
def api_key_revoke(*, name: str, actor: str = SYSTEM_ACTOR) -> ApiKey:
    key = ApiKey.objects.select_for_update().filter(name=name).first()
    if key is None:
        raise errors.NotFound(f"No API key named {name!r}.")
    if key.revoked_at is None:
        key.revoked_at = timezone.now()
        key.save(update_fields=["revoked_at"])
        record(actor=actor, action="api_key.revoked", resource=f"api-keys/{name}")
    return key


@transaction.atomic
def user_create(*, username: str, password: str, role: str, actor: str = SYSTEM_ACTOR) -> User:
    """A sign-in account for the console (and the admin site); its role is kept as Django's flags,
    as OIDC sign-ins keep theirs: admin = superuser, operator = staff, viewer = neither."""
    if role not in ROLES:
        raise errors.ValidationFailed(f"role must be one of {', '.join(ROLES)}", field="role")
    if not username.strip():
        raise errors.ValidationFailed("username must not be empty", field="username")
    if User.objects.filter(username=username).exists():
        raise errors.AlreadyExists(f"A user named {username!r} already exists.")
    user = User.objects.create_user(
        username=username, password=password, is_superuser=role == "admin", is_staff=role != "viewer"
    )
    record(actor=actor, action="user.created", resource=f"users/{username}", changes={"role": role})
    return user
