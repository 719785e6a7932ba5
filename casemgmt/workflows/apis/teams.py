"""Team endpoints: list and read (`tasks:read` or `admin:users`), writes and members (`admin:users`)."""

from __future__ import annotations

import uuid
from typing import Any

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from casemgmt.accounts import selectors
from casemgmt.accounts.models import Team
from casemgmt.accounts.request import AuthenticatedRequest
from casemgmt.workflows.services import teams as services
from shared.api.errors import PermissionDenied
from shared.api.fields import StrictBooleanField, StrictCharField, StrictSerializer
from shared.api.openapi import page_parameters
from shared.api.pagination import get_page, list_body
from shared.api.time import iso
from shared.auth.permissions import has_permission


def team_out(team: Team) -> dict[str, Any]:
    return {
        "id": str(team.id),
        "name": team.name,
        "description": team.description,
        "members": [
            {"userId": str(m.user_id), "email": m.user.email, "lead": m.lead} for m in team.memberships.all()
        ],
        "createdAt": iso(team.created_at),
    }


def _require_team_reader(request: AuthenticatedRequest) -> None:
    granted = request.user.get_permission_strings()
    if not (has_permission(granted, "tasks:read") or has_permission(granted, "admin:users")):
        raise PermissionDenied("Requires permission tasks:read or admin:users.")


def _team(request: AuthenticatedRequest, team_id: uuid.UUID) -> Team:
    return selectors.team_get(tenant_id=request.user.member_tenant_id, team_id=team_id)


class TeamListCreateApi(APIView):
    required = {"GET": "", "POST": "admin:users"}

    class InputSerializer(StrictSerializer):
        name = StrictCharField(max_length=100)
        description = StrictCharField(max_length=2000, required=False, allow_blank=True, default="")

    @extend_schema(parameters=page_parameters(), responses={200: OpenApiTypes.OBJECT})
    def get(self, request: AuthenticatedRequest) -> Response:
        _require_team_reader(request)
        page = get_page(request.query_params, default_limit=25, max_limit=100)
        teams, total = selectors.team_list(tenant_id=request.user.member_tenant_id, page=page)
        return Response(list_body("data", [team_out(t) for t in teams], total, page))

    @extend_schema(responses={201: OpenApiTypes.OBJECT})
    def post(self, request: AuthenticatedRequest) -> Response:
        body = self.InputSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        team = services.team_create(actor=request.user, **body.validated_data)
        return Response(team_out(_team(request, team.id)), status=201)


class TeamDetailApi(APIView):
    required = {"GET": "", "PATCH": "admin:users", "DELETE": "admin:users"}

    class InputSerializer(StrictSerializer):
        name = StrictCharField(max_length=100, required=False)
        description = StrictCharField(max_length=2000, required=False, allow_blank=True)

    @extend_schema(responses={200: OpenApiTypes.OBJECT})
    def get(self, request: AuthenticatedRequest, team_id: uuid.UUID) -> Response:
        _require_team_reader(request)
        return Response(team_out(_team(request, team_id)))

    @extend_schema(responses={200: OpenApiTypes.OBJECT})
    def patch(self, request: AuthenticatedRequest, team_id: uuid.UUID) -> Response:
        team = _team(request, team_id)
        body = self.InputSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        services.team_update(actor=request.user, team=team, **body.validated_data)
        return Response(team_out(_team(request, team_id)))

    @extend_schema(responses={204: None})
    def delete(self, request: AuthenticatedRequest, team_id: uuid.UUID) -> Response:
        services.team_delete(actor=request.user, team=_team(request, team_id))
        return Response(status=204)


class TeamMemberAddApi(APIView):
    required = {"POST": "admin:users"}

    class InputSerializer(StrictSerializer):
        userId = serializers.UUIDField()
        lead = StrictBooleanField(required=False, default=False)

    @extend_schema(responses={201: OpenApiTypes.OBJECT})
    def post(self, request: AuthenticatedRequest, team_id: uuid.UUID) -> Response:
        team = _team(request, team_id)
        body = self.InputSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        services.team_member_add(
            actor=request.user,
            team=team,
            user_id=body.validated_data["userId"],
            lead=body.validated_data["lead"],
        )
        return Response(team_out(_team(request, team_id)), status=201)


class TeamMemberRemoveApi(APIView):
    required = {"DELETE": "admin:users"}

    @extend_schema(responses={204: None})
    def delete(self, request: AuthenticatedRequest, team_id: uuid.UUID, user_id: uuid.UUID) -> Response:
        services.team_member_remove(actor=request.user, team=_team(request, team_id), user_id=user_id)
        return Response(status=204)
