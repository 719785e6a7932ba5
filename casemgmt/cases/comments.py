"""Comments on cases: plain text with `@email` mentions that notify the tenant users they name.

A mention is `@` followed by an email address of an active user of the case's tenant; each such
user hears of it once per comment, by a WebSocket message sent to them alone (`case:mentioned`).
Everyone who may read cases hears `case:commented`.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from django.db import transaction
from django.db.models import QuerySet

from casemgmt.accounts.models import User
from casemgmt.audit.services import record
from casemgmt.cases.models import Case, CaseComment
from casemgmt.realtime.events import broadcast_on_commit
from shared.api.errors import ValidationFailed
from shared.api.time import now_ms

if TYPE_CHECKING:
    from shared.api.pagination import Page

BODY_MAX = 10_000
# An address after "@" at the start or after a non-word character (so "a@b.test" inside a word
# or a longer address is not read as a mention of "b.test").
MENTION = re.compile(r"(?<![\w.@])@([A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,})")


def mentioned_users(tenant_id: Any, body: str) -> list[User]:
    emails = {m.lower().rstrip(".") for m in MENTION.findall(body)}
    if not emails:
        return []
    return list(User.objects.filter(tenant_id=tenant_id, email__in=emails, is_active=True).order_by("email"))


@transaction.atomic
def comment_add(*, user: User, case: Case, body: str) -> CaseComment:
    if not isinstance(body, str) or not 1 <= len(body) <= BODY_MAX:
        raise ValidationFailed(f"body must be 1 to {BODY_MAX} characters", field="body")
    comment = CaseComment.objects.create(
        tenant_id=case.tenant_id, case=case, author=user, body=body, created_at=now_ms()
    )
    mentions = mentioned_users(case.tenant_id, body)
    record(
        tenant_id=case.tenant_id,
        actor=str(user.id),
        action="case:commented",
        resource=f"cases/{case.id}",
        changes={"commentId": str(comment.id), "mentions": [str(u.id) for u in mentions]},
    )
    data = {"caseId": str(case.id), "commentId": str(comment.id)}
    broadcast_on_commit(tenant_id=case.tenant_id, type="case:commented", data=data, permission="cases:read")
    for mentioned in mentions:
        if mentioned.id != user.id:
            broadcast_on_commit(
                tenant_id=case.tenant_id,
                type="case:mentioned",
                data={**data, "caseNumber": case.case_number, "by": str(user.id)},
                only_user=str(mentioned.id),
            )
    return comment


def comment_list(*, case: Case, page: Page) -> tuple[list[CaseComment], int]:
    comments: QuerySet[CaseComment] = CaseComment.objects.filter(case=case).select_related("author")
    total = comments.count()
    return list(comments.order_by("created_at", "id")[page.offset : page.offset + page.limit]), total
