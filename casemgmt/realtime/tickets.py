"""One-use tickets for opening `/ws`, so no long-lived credential travels in a URL.

A URL's query string is written to the access logs of every proxy on the way; a JWT there stays
usable for its whole lifetime. A ticket is good for one socket within TICKET_SECONDS. It stands for
the credential that asked for it: the socket re-checks that credential while it is open, so a
logout, disable or password change still closes it.

Stored in the service's cache (Redis in production, the file cache in the embedded default) under
a hash of the ticket, the credential sealed with a key derived from the ticket itself: whoever reads
the cache learns neither a ticket nor a credential. One use: every cache backend's `delete` answers
whether it removed the key, and of two redemptions racing only one removes it (Redis `DEL`, the file
cache's unlink), so only that one gets the credential.
"""

from __future__ import annotations

import base64
import hashlib
import secrets
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from cryptography.fernet import Fernet, InvalidToken
from django.core.cache import cache

# decision: 30 s is ample between asking for a ticket and opening the socket (the console does both
# at once), and short enough that a ticket that leaked through a log is useless by the time it is read.
TICKET_SECONDS = 30
_PREFIX = "ws-ticket:"


@dataclass(frozen=True)
class Ticket:
    ticket: str
    expires_at: datetime


def _key(ticket: str) -> str:
    return _PREFIX + hashlib.sha256(b"id:" + ticket.encode()).hexdigest()


def _seal(ticket: str) -> Fernet:
    return Fernet(base64.urlsafe_b64encode(hashlib.sha256(b"seal:" + ticket.encode()).digest()))


def ticket_issue(*, credential: str) -> Ticket:
    ticket = secrets.token_urlsafe(32)
    sealed = _seal(ticket).encrypt(credential.encode()).decode("ascii")
    cache.set(_key(ticket), sealed, timeout=TICKET_SECONDS)
    return Ticket(ticket=ticket, expires_at=datetime.now(UTC) + timedelta(seconds=TICKET_SECONDS))


def ticket_redeem(ticket: str) -> str | None:
    """The credential the ticket stands for, the first time it is presented within its lifetime;
    None otherwise (unknown, used, expired)."""
    if not ticket or len(ticket) > 100:
        return None
    key = _key(ticket)
    sealed = cache.get(key)
    if sealed is None or not cache.delete(key):
        return None  # unknown, expired, or another redemption removed it first
    try:
        # The cache's own expiry may round up (the file cache counts whole seconds): the seal's
        # timestamp holds the ticket to its lifetime.
        return _seal(ticket).decrypt(sealed.encode("ascii"), ttl=TICKET_SECONDS).decode()
    except InvalidToken:
        return None
