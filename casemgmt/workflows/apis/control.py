"""Workflow control endpoints: messages to a case's `wait` steps, and moving live cases to another
published version of their workflow."""

from __future__ import annotations

from typing import Any
from uuid import UUID

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from casemgmt.accounts.request import AuthenticatedRequest
from casemgmt.cases.selectors import access_case
from casemgmt.workflows.openapi import MessageOut, MigrationOut
from casemgmt.workflows.selectors import workflow_get
from casemgmt.workflows.services.control import case_message_deliver
from casemgmt.workflows.services.migration import MAX_CASES, workflow_migrate
from shared.api.fields import StrictIntegerField, StrictSerializer
from shared.api.time import iso


class MessageInput(StrictSerializer):
    data = serializers.JSONField(required=False, allow_null=True, default=None)  # type: ignore[assignment]  # a declared field: DRF's metaclass pops it from the class


class CaseMessageApi(APIView):
    required = {"POST": "cases:update"}
    OutputSerializer = MessageOut

    @extend_schema(request=MessageInput, responses={200: MessageOut})
    def post(self, request: AuthenticatedRequest, case_id: UUID, name: str) -> Response:
        body = MessageInput(data=request.data)
        body.is_valid(raise_exception=True)
        case = access_case(user=request.user, case_id=case_id)
        row = case_message_deliver(user=request.user, case=case, name=name, data=body.validated_data["data"])
        return Response(
            {
                "caseId": str(case.id),
                "stepId": row.step_id,
                "message": name,
                "status": row.status,
                "result": row.result,
                "completedAt": iso(row.completed_at),
            }
        )


class MigrationInput(StrictSerializer):
    fromVersion = StrictIntegerField(min_value=1, max_value=2**31 - 1)
    caseIds = serializers.ListField(
        child=serializers.UUIDField(), required=False, allow_null=True, default=None, max_length=MAX_CASES
    )
    stepMapping = serializers.DictField(
        child=serializers.CharField(max_length=100), required=False, default=dict
    )


class WorkflowMigrateApi(APIView):
    required = {"POST": "workflows:*"}
    OutputSerializer = MigrationOut

    @extend_schema(request=MigrationInput, responses={200: MigrationOut})
    def post(self, request: AuthenticatedRequest, workflow_id: UUID) -> Response:
        workflow = workflow_get(tenant_id=request.user.tenant_id, workflow_id=workflow_id)
        body = MigrationInput(data=request.data)
        body.is_valid(raise_exception=True)
        data: dict[str, Any] = body.validated_data
        result = workflow_migrate(
            user=request.user,
            workflow=workflow,
            from_version=data["fromVersion"],
            step_mapping=data["stepMapping"],
            case_ids=data["caseIds"],
        )
        return Response({"migrated": result.migrated, "failed": result.failed})
