"""Who may hold a task, and who gets it: candidate teams, out-of-office delegation, strategies.

A task step may name a candidate `team`: only its members may claim the task or have it assigned.
An assignment to a user who is out of office goes to their delegate instead (audited
`task:delegated`), or leaves the task unassigned when they named none. A step with a team may
pick its assignee by `assignment`: `round_robin` (members in turn, per case type and step id) or
`least_loaded` (fewest open tasks held; ties by the earliest last assignment by a strategy).
Members who are out of office, inactive or lack the step's role are skipped.

Concurrent activations of one step over one team serialize on that team's row (`FOR NO KEY UPDATE`),
taken after the case lock the engine already holds: each decision sees the previous one committed.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any

from django.db.models import Count, F

from casemgmt.accounts.models import Team, TeamMembership, User
from casemgmt.accounts.selectors import is_away, team_ids_of
from casemgmt.workflows.models import CaseStep, TeamRotation
from shared.api.time import now_ms

if TYPE_CHECKING:
    from collections.abc import Callable

STRATEGIES = ("round_robin", "least_loaded")


def is_member(team_id: Any, user: User) -> bool:
    return team_id in team_ids_of(user)


def hold_problem(row: CaseStep, user: User) -> str | None:
    """Why `user` may not hold the task (its role or team rule), or None."""
    if row.role and row.role not in user.role_names:
        return f"must hold role {row.role!r}: this task is restricted to that role"
    if row.candidate_team_id and not is_member(row.candidate_team_id, user):
        return "must be a member of the task's team"
    return None


def with_delegation(
    row: CaseStep, target: User, *, actor: str, audit: Callable[[CaseStep, str, str, dict[str, Any]], None]
) -> User | None:
    """The user an assignment to `target` goes to: `target`, or while `target` is out of office
    its delegate (audited `task:delegated`), or None (stays unassigned) without a usable one.
    One hop only: a delegate who is away too does not pass the task on again."""
    now = now_ms()
    if not is_away(target, now):
        return target
    delegate = target.away_delegate
    if delegate is not None and (
        not delegate.is_active or is_away(delegate, now) or hold_problem(row, delegate)
    ):
        delegate = None
    audit(
        row,
        actor,
        "task:delegated",
        {"from": str(target.id), "to": str(delegate.id) if delegate else None, "reason": "out of office"},
    )
    return delegate


def _eligible_members(row: CaseStep, team: Team, now: datetime) -> list[TeamMembership]:
    members = (
        TeamMembership.objects.filter(team=team, user__is_active=True)
        .select_related("user")
        .prefetch_related("user__roles")
        .order_by("added_at", "id")
    )
    return [
        m
        for m in members
        if not is_away(m.user, now) and not (row.role and row.role not in m.user.role_names)
    ]


def strategy_pick(*, row: CaseStep, team: Team, strategy: str, case_type_key: str) -> User | None:
    """The member `strategy` gives the task to, or None when no member is available. Runs in the
    activating transaction and holds the team's lock until it commits."""
    Team.objects.select_for_update(no_key=True).filter(pk=team.pk).first()
    now = now_ms()
    members = _eligible_members(row, team, now)
    if not members:
        return None
    if strategy == "round_robin":
        chosen = _next_in_turn(row, team, members, case_type_key)
    else:
        chosen = _least_loaded(row, members)
    TeamMembership.objects.filter(pk=chosen.pk).update(last_assigned_at=now)
    return chosen.user


def _next_in_turn(
    row: CaseStep, team: Team, members: list[TeamMembership], case_type_key: str
) -> TeamMembership:
    rotation, _ = TeamRotation.objects.get_or_create(
        team=team, case_type_key=case_type_key, step_id=row.step_id, defaults={"tenant_id": row.tenant_id}
    )
    order = [m.user_id for m in TeamMembership.objects.filter(team=team).order_by("added_at", "id")]
    start = order.index(rotation.last_user_id) + 1 if rotation.last_user_id in order else 0
    available = {m.user_id: m for m in members}
    chosen = next(available[uid] for uid in order[start:] + order[:start] if uid in available)
    rotation.last_user_id = chosen.user_id
    rotation.save(update_fields=["last_user"])
    return chosen


def _least_loaded(row: CaseStep, members: list[TeamMembership]) -> TeamMembership:
    loads = dict(
        CaseStep.objects.filter(
            tenant_id=row.tenant_id,
            is_task=True,
            status=CaseStep.ACTIVE,
            assigned_to__in=[m.user_id for m in members],
        )
        .exclude(pk=row.pk)
        .values("assigned_to")
        .annotate(n=Count("pk"))
        .values_list("assigned_to", "n")
    )
    # Never assigned by a strategy counts as the earliest; then membership order.
    ordered = TeamMembership.objects.filter(pk__in=[m.pk for m in members]).order_by(
        F("last_assigned_at").asc(nulls_first=True), "added_at", "id"
    )
    rank = {pk: i for i, pk in enumerate(ordered.values_list("pk", flat=True))}
    return min(members, key=lambda m: (loads.get(m.user_id, 0), rank[m.pk]))
