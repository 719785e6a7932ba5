"""Workflow definition endpoints. Permissions: workflows:read for reads,
workflows:write for create/edit, workflows:publish for publish/withdraw (`workflows:*` grants all)."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from casemgmt.workflows.definitions import SLA_HOURS_MAX, step_shape_errors
from casemgmt.workflows.models import Workflow
from casemgmt.workflows.openapi import WorkflowOut, WorkflowPageOut
from casemgmt.workflows.selectors import workflow_get, workflow_list
from casemgmt.workflows.services.workflows import (
    workflow_create,
    workflow_publish,
    workflow_update,
    workflow_withdraw,
)
from shared.api.errors import ValidationFailed
from shared.api.fields import StrictCharField
from shared.api.openapi import TEXT, one_of, page_parameters, query
from shared.api.pagination import get_page, page_links
from shared.api.querying import QueryChoiceField, QuerySerializer, QueryTextField
from shared.api.time import iso


class DefinitionInput(serializers.Serializer):
    name = StrictCharField(max_length=200)
    steps = serializers.ListField(child=serializers.DictField(), allow_empty=True, max_length=200)
    autoClose = serializers.BooleanField(required=False, default=False)
    # Bounded so that case creation (slaDeadline = now + slaHours) can never overflow.
    slaHours = serializers.IntegerField(
        required=False, allow_null=True, default=None, min_value=1, max_value=SLA_HOURS_MAX
    )
    outcomes = serializers.ListField(
        child=StrictCharField(max_length=200), required=False, allow_null=True, default=None
    )

    def validate_steps(self, steps: list[Any]) -> list[Any]:
        # Every type problem at once, as one 400 (a `type` given as a list must not crash publish).
        errors = step_shape_errors(steps)
        if errors:
            raise ValidationFailed.from_errors(errors)
        return steps


def _definition_args(data: dict[str, Any]) -> dict[str, Any]:
    """The service's keyword arguments for a validated `DefinitionInput` (create and edit)."""
    return {
        "name": data["name"],
        "steps": data["steps"],
        "auto_close": data["autoClose"],
        "sla_hours": data["slaHours"],
        "outcomes": data["outcomes"],
    }


def workflow_out(workflow: Workflow) -> dict[str, Any]:
    definition = workflow.definition or {}
    return {
        "id": str(workflow.id),
        "caseTypeKey": workflow.case_type_key,
        "name": workflow.name,
        "version": workflow.version,
        "status": workflow.status,
        "isDefault": workflow.is_default,
        "autoClose": workflow.auto_close,
        "slaHours": workflow.sla_hours,
        "outcomes": definition.get("outcomes"),
        "steps": definition.get("steps") or [],
        "createdAt": iso(workflow.created_at),
        "updatedAt": iso(workflow.updated_at),
        "publishedAt": iso(workflow.published_at),
    }


class WorkflowListCreateApi(APIView):
    required = {"GET": "workflows:read", "POST": "workflows:write"}
    OutputSerializer = WorkflowPageOut

    class InputSerializer(DefinitionInput):
        caseTypeKey = StrictCharField(max_length=100)

    class FilterSerializer(QuerySerializer):
        caseTypeKey = QueryTextField(source="case_type_key")  # noqa: N815 (the API's spelling)
        status = QueryChoiceField(
            choices=(Workflow.DRAFT, Workflow.PUBLISHED, Workflow.WITHDRAWN),
            message="status must be draft, published or withdrawn",
        )

    @extend_schema(
        operation_id="workflows_list",
        parameters=[
            *page_parameters(),
            query("caseTypeKey", TEXT),
            query("status", one_of(Workflow.DRAFT, Workflow.PUBLISHED, Workflow.WITHDRAWN)),
        ],
    )
    def get(self, request: Request) -> Response:
        page = get_page(request.query_params, default_limit=25, max_limit=100)
        filters = self.FilterSerializer(data=request.query_params)
        filters.is_valid(raise_exception=True)
        workflows = workflow_list(tenant_id=request.user.tenant_id, **filters.validated_data)
        total = workflows.count()
        rows = workflows[page.offset : page.offset + page.limit]
        next_url, _ = page_links(request, page, total)
        return Response({"data": [workflow_out(w) for w in rows], "total": total, "next": next_url})

    @extend_schema(responses={201: WorkflowOut})
    def post(self, request: Request) -> Response:
        body = self.InputSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        data = body.validated_data
        workflow = workflow_create(
            user=request.user, case_type_key=data["caseTypeKey"], **_definition_args(data)
        )
        return Response(workflow_out(workflow), status=201)


class WorkflowDetailApi(APIView):
    required = {"GET": "workflows:read", "PUT": "workflows:write"}
    OutputSerializer = WorkflowOut

    class InputSerializer(DefinitionInput):
        pass

    def get(self, request: Request, workflow_id: Any) -> Response:
        return Response(workflow_out(workflow_get(tenant_id=request.user.tenant_id, workflow_id=workflow_id)))

    def put(self, request: Request, workflow_id: Any) -> Response:
        workflow = workflow_get(tenant_id=request.user.tenant_id, workflow_id=workflow_id)
        body = self.InputSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        workflow = workflow_update(
            user=request.user, workflow=workflow, **_definition_args(body.validated_data)
        )
        return Response(workflow_out(workflow))


class WorkflowPublishApi(APIView):
    required = {"POST": "workflows:publish"}
    OutputSerializer = WorkflowOut

    def post(self, request: Request, workflow_id: Any) -> Response:
        workflow = workflow_get(tenant_id=request.user.tenant_id, workflow_id=workflow_id)
        return Response(workflow_out(workflow_publish(user=request.user, workflow=workflow)))


class WorkflowWithdrawApi(APIView):
    required = {"POST": "workflows:publish"}
    OutputSerializer = WorkflowOut

    def post(self, request: Request, workflow_id: Any) -> Response:
        workflow = workflow_get(tenant_id=request.user.tenant_id, workflow_id=workflow_id)
        return Response(workflow_out(workflow_withdraw(user=request.user, workflow=workflow)))
