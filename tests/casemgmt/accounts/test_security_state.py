"""Revocations and login lockouts are kept in the database: losing every cached copy (a Redis
restart without persistence) neither brings a logged-out token back nor unlocks an account."""

from __future__ import annotations

import uuid
from datetime import timedelta

from django.core.cache import cache
from django.utils import timezone

from casemgmt.accounts.models import LoginThrottle, RevokedToken
from casemgmt.accounts.tasks import purge_expired_security_state
from tests.casemgmt.conftest import PASSWORD

LEGACY_CACHE_PREFIXES = ("jwt:revoked:", "auth:lockout:")


def login(client, email, password, **extra):
    return client.post("/auth/login", {"email": email, "password": password}, format="json", **extra)


def forget_cached_security_state(*keys: str) -> None:
    """What a Redis restart without persistence does to this test's keys (and only to them)."""
    cache.delete_many([prefix + key for prefix in LEGACY_CACHE_PREFIXES for key in keys])


def test_logged_out_token_stays_refused_after_the_cache_is_lost(api, admin_user):
    client = api(None)
    token = login(client, admin_user.email, PASSWORD).json()["token"]
    auth = {"HTTP_AUTHORIZATION": f"Bearer {token}"}
    assert client.post("/auth/logout", **auth).status_code == 204
    jti = RevokedToken.objects.get().jti
    forget_cached_security_state(jti)
    assert client.get("/auth/preferences", **auth).status_code == 401


def test_lockout_survives_the_cache_being_lost(api, admin_user):
    client = api(None)
    for _ in range(5):
        assert login(client, admin_user.email, "wrong-password-123").status_code == 401
    keys = list(LoginThrottle.objects.values_list("key", flat=True))
    assert keys, "failures are counted in the database"
    forget_cached_security_state(*keys, *(k + ":ends" for k in keys))
    locked = login(client, admin_user.email, PASSWORD)
    assert locked.status_code == 429
    assert 1 <= int(locked["Retry-After"]) <= 15 * 60


def test_purge_removes_only_expired_state(db):
    now = timezone.now()
    RevokedToken.objects.create(jti=uuid.uuid4().hex, expires_at=now - timedelta(seconds=1))
    live = RevokedToken.objects.create(jti=uuid.uuid4().hex, expires_at=now + timedelta(hours=1))
    LoginThrottle.objects.create(key="email:old", failures=9, window_ends_at=now - timedelta(seconds=1))
    current = LoginThrottle.objects.create(
        key="email:new", failures=1, window_ends_at=now + timedelta(minutes=5)
    )
    purge_expired_security_state()
    assert list(RevokedToken.objects.all()) == [live]
    assert list(LoginThrottle.objects.all()) == [current]
