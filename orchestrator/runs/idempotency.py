"""Replays of run-creating requests sent with an `Idempotency-Key` header.

A client that loses the answer to schedule-task, schedule-dag or rerun (a timeout, a dropped
connection, a 5xx from a proxy) retries with the same key and gets the first answer, status and body,
instead of a second run. A key is the caller's own (two callers may use the same string), lasts
24 hours, and stands for one request: the same key with another method, path or body is a 422.
Only successful answers are kept: a refused request created nothing, so its retry runs afresh.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable
from datetime import timedelta
from typing import Any

from django.db import IntegrityError, transaction
from django.utils import timezone
from rest_framework.request import Request
from rest_framework.response import Response

from orchestrator.runs.models import IdempotencyKey
from shared.api import errors

HEADER = "Idempotency-Key"
LIFETIME = timedelta(hours=24)
_KEY_RE = re.compile(r"^[\x21-\x7e]{1,255}$")  # printable ASCII, no spaces


def idempotent(request: Request, create: Callable[[], tuple[int, dict[str, Any]]]) -> Response:
    """Answers `create()`'s (status, body), or the stored answer of an earlier request with the key."""
    key = request.headers.get(HEADER)
    if key is None:
        status, body = create()
        return Response(body, status=status)
    if not _KEY_RE.match(key):
        raise errors.ValidationFailed(f"{HEADER} must be 1-255 printable ASCII characters.", field=HEADER)
    principal, fingerprint = _principal(request), _fingerprint(request)
    _purge_expired()
    stored = _stored(principal, key)
    if stored is not None:
        return _replay(stored, fingerprint)
    try:
        # One transaction for the run and its key: of two concurrent requests with one key, the
        # second's insert waits for the first to commit, fails on the unique key, and its own run
        # is rolled back with it.
        with transaction.atomic():
            status, body = create()
            IdempotencyKey.objects.create(
                principal=principal,
                key=key,
                fingerprint=fingerprint,
                status_code=status,
                response=body,
                created_at=timezone.now(),
            )
    except IntegrityError:
        stored = _stored(principal, key)
        if stored is None:
            raise
        return _replay(stored, fingerprint)
    return Response(body, status=status)


def _principal(request: Request) -> str:
    user = request.user
    kind = getattr(user, "kind", "session")
    name = getattr(user, "name", None) or (user.get_username() if user.is_authenticated else "")
    return f"{kind}:{name}" if name else "anonymous"


def _fingerprint(request: Request) -> str:
    body = request.data if isinstance(request.data, dict) else {}
    canonical = json.dumps([request.method, request.path, body], sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def _stored(principal: str, key: str) -> IdempotencyKey | None:
    return IdempotencyKey.objects.filter(
        principal=principal, key=key, created_at__gt=timezone.now() - LIFETIME
    ).first()


def _purge_expired() -> None:
    # Done on every keyed request (an indexed range delete) so expiry needs no periodic process.
    IdempotencyKey.objects.filter(created_at__lte=timezone.now() - LIFETIME).delete()


def _replay(stored: IdempotencyKey, fingerprint: str) -> Response:
    if stored.fingerprint != fingerprint:
        raise errors.IdempotencyKeyReused()
    return Response(stored.response, status=stored.status_code, headers={"Idempotent-Replayed": "true"})
