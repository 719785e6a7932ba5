"""What the console's existing pages show of teams' features (no view imports: views use these)."""

from __future__ import annotations

from typing import Any

from casemgmt.accounts.models import User
from casemgmt.accounts.selectors import out_of_office_of
from shared.api.time import now_ms
from shared.auth.permissions import has_all


def tenant_people(user: User) -> list[User]:
    """Active people of the caller's tenant, for assignee and delegate choices."""
    return list(
        User.objects.filter(tenant_id=user.member_tenant_id, is_active=True, kind=User.KIND_HUMAN).order_by(
            "email"
        )
    )


def case_comments_context(user: User, case: Any) -> dict[str, Any]:
    """What the case page shows of its comments (and whether the caller may add one)."""
    return {
        "comments": list(case.comments.select_related("author").order_by("created_at", "id")[:500]),
        "can_comment": has_all(user.get_permission_strings(), ["cases:update"]),
    }


def out_of_office_context(user: User) -> dict[str, Any]:
    me = User.objects.get(pk=user.pk)
    return {
        "away": out_of_office_of(me, now_ms()),
        "away_row": me,
        "people": [p for p in tenant_people(user) if p.pk != user.pk],
    }
