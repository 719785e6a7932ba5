"""Console-only writes: the short-lived WebSocket credentials a signed-in page uses."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from django.db import transaction

from casemgmt.accounts.tokens import issue_for, revoke
from casemgmt.realtime.tickets import Ticket, ticket_issue

if TYPE_CHECKING:
    from django.contrib.sessions.backends.base import SessionBase

    from casemgmt.accounts.models import User

SESSION_KEY = "console_live_tokens"


def live_ticket_issue(*, user: User, session: SessionBase) -> Ticket:
    """A one-use ticket for `/ws` (the socket authenticates with a credential, never the session
    cookie). The ticket stands for a JWT issued here that never reaches the browser, so no token is
    in a page, a script or a socket URL. The JWT's id stays in the session so signing out revokes
    it: the open socket then closes within the realtime app's re-check window instead of living on
    until the token expires."""
    issued = issue_for(user)
    now = time.time()
    kept = [t for t in session.get(SESSION_KEY, []) if t["exp"] > now]
    session[SESSION_KEY] = [*kept, {"jti": issued.jti, "exp": int(issued.expires_at.timestamp())}]
    return ticket_issue(credential=issued.token)


@transaction.atomic
def live_tokens_revoke(*, session: SessionBase) -> None:
    now = time.time()
    tokens: list[dict[str, Any]] = session.get(SESSION_KEY, [])
    for claims in tokens:
        if claims["exp"] > now:
            revoke(claims)
    session[SESSION_KEY] = []
