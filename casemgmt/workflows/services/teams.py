"""Writes for teams and their members (`admin:users`), each audited in its own transaction.

Teams live with the users (accounts) so every app can read them; their writes live here because
deleting a team must check that no open task names it.
"""

from __future__ import annotations

from typing import Any

from django.db import IntegrityError, transaction

from casemgmt.accounts.authentication import forget_cached_principals
from casemgmt.accounts.models import Team, TeamMembership, User
from casemgmt.audit.services import record
from casemgmt.workflows.models import CaseStep
from shared.api import errors


def _audit(team: Team, actor: User, action: str, changes: dict[str, Any]) -> None:
    record(
        tenant_id=team.tenant_id,
        actor=str(actor.id),
        action=action,
        resource=f"teams/{team.id}",
        changes=changes,
    )


def _name_taken(tenant_id: Any, name: str, exclude: Any = None) -> None:
    if Team.objects.filter(tenant_id=tenant_id, name=name).exclude(pk=exclude).exists():
        raise errors.AlreadyExists(f"A team named {name!r} already exists.", field="name")


@transaction.atomic
def team_create(*, actor: User, name: str, description: str = "") -> Team:
    tenant_id = actor.member_tenant_id
    _name_taken(tenant_id, name)
    try:
        with transaction.atomic():
            team = Team.objects.create(tenant_id=tenant_id, name=name, description=description)
    except IntegrityError as exc:  # a concurrent create of the same name
        raise errors.AlreadyExists(f"A team named {name!r} already exists.", field="name") from exc
    _audit(team, actor, "team:created", {"name": name, "description": description})
    return team


@transaction.atomic
def team_update(*, actor: User, team: Team, name: str | None = None, description: str | None = None) -> Team:
    changes: dict[str, Any] = {}
    if name is not None and name != team.name:
        _name_taken(team.tenant_id, name, exclude=team.pk)
        changes["name"] = {"before": team.name, "after": name}
        team.name = name
    if description is not None and description != team.description:
        changes["description"] = {"before": team.description, "after": description}
        team.description = description
    if changes:
        team.save(update_fields=["name", "description"])
        _audit(team, actor, "team:updated", changes)
    return team


@transaction.atomic
def team_delete(*, actor: User, team: Team) -> None:
    Team.objects.select_for_update().filter(pk=team.pk).first()
    if CaseStep.objects.filter(candidate_team=team, is_task=True, status=CaseStep.ACTIVE).exists():
        raise errors.InvalidState("An open task names this team; complete or reassign it first.")
    _audit(team, actor, "team:deleted", {"name": team.name})
    team.delete()


@transaction.atomic
def team_member_add(*, actor: User, team: Team, user_id: Any, lead: bool = False) -> TeamMembership:
    user = User.objects.filter(tenant_id=team.tenant_id, id=user_id, is_active=True).first()
    if user is None:
        raise errors.ValidationFailed("userId must be an active user of this tenant", field="userId")
    membership, created = TeamMembership.objects.get_or_create(
        team=team, user=user, defaults={"tenant_id": team.tenant_id, "lead": lead}
    )
    if not created and membership.lead != lead:
        membership.lead = lead
        membership.save(update_fields=["lead"])
    _audit(team, actor, "team:member_added", {"userId": str(user.id), "lead": lead})
    forget_cached_principals()  # a member's next request sees the team's restricted cases
    return membership


@transaction.atomic
def team_member_remove(*, actor: User, team: Team, user_id: Any) -> None:
    deleted, _ = TeamMembership.objects.filter(team=team, user_id=user_id).delete()
    if not deleted:
        raise errors.NotFound("No such member of this team.")
    _audit(team, actor, "team:member_removed", {"userId": str(user_id)})
    forget_cached_principals()
