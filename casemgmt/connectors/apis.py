"""Connector endpoints: the catalogue, tenant configuration, test calls, invocation logs and the
outbox (dead letters and their replay)."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from casemgmt.accounts.request import AuthenticatedRequest
from casemgmt.connectors import openapi
from casemgmt.connectors.base import Action, Connector, Input
from casemgmt.connectors.delivery import delivery_replay
from casemgmt.connectors.models import ConnectorConfig, Delivery, Invocation
from casemgmt.connectors.registry import connectors
from casemgmt.connectors.selectors import delivery_get, delivery_list, invocation_list
from casemgmt.connectors.services import (
    connector_config_redacted,
    connector_config_set,
    connector_require,
    connector_test,
)
from shared.api.errors import ValidationFailed
from shared.api.fields import StrictCharField
from shared.api.openapi import TEXT, UUID, one_of, page_parameters, query
from shared.api.pagination import get_page, list_body
from shared.api.querying import QueryChoiceField, QuerySerializer, QueryTextField, QueryUUIDField
from shared.api.time import iso


def input_out(spec: Input) -> dict[str, Any]:
    out: dict[str, Any] = {"type": spec.type}
    if spec.enum is not None:
        out["enum"] = list(spec.enum)
    if spec.required:
        out["required"] = True
    return out


def action_out(action: Action) -> dict[str, Any]:
    out: dict[str, Any] = {"name": action.name, "displayName": action.display_name}
    if action.inputs:
        out["inputs"] = {name: input_out(spec) for name, spec in action.inputs.items()}
    return out


def connector_out(connector: Connector, configured: bool) -> dict[str, Any]:
    return {
        "key": connector.key,
        "displayName": connector.display_name,
        "description": connector.description,
        "requiresAuth": connector.requires_auth,
        "configured": configured,
        "actions": [action_out(a) for a in connector.actions.values()],
    }


def invocation_out(row: Invocation) -> dict[str, Any]:
    return {
        "id": row.id, "connector": row.connector, "action": row.action, "source": row.source,
        "deliveryId": str(row.delivery_id) if row.delivery_id else None,
        "caseId": str(row.case_id) if row.case_id else None, "stepId": row.step_id or None,
        "attempt": row.attempt, "url": row.url, "method": row.method, "requestHeaders": row.request_headers,
        "statusCode": row.status_code, "responseExcerpt": row.response_excerpt, "latencyMs": row.latency_ms,
        "success": row.success,
        "error": {"code": row.error_code, "message": row.error} if not row.success else None,
        "createdAt": iso(row.created_at),
    }  # fmt: skip


def delivery_out(row: Delivery) -> dict[str, Any]:
    return {
        "id": str(row.id), "connector": row.connector, "action": row.action,
        "caseId": str(row.case_id) if row.case_id else None,
        "stepId": row.step.step_id if row.step_id and row.step else None,
        "status": row.status, "attempts": row.attempts, "maxAttempts": row.max_attempts,
        "nextAttemptAt": iso(row.next_attempt_at) if row.status == Delivery.PENDING else None,
        "lastStatus": row.last_status, "lastError": row.last_error or row.render_error or None,
        "replays": row.replays, "createdAt": iso(row.created_at), "deliveredAt": iso(row.delivered_at),
    }  # fmt: skip


class ConnectorListApi(APIView):
    required = {"GET": "connectors:read"}

    @extend_schema(responses=openapi.ConnectorOut(many=True))
    def get(self, request: AuthenticatedRequest) -> Response:
        configured = set(
            ConnectorConfig.objects.filter(tenant_id=request.user.member_tenant_id).values_list(
                "key", flat=True
            )
        )
        listed = [c for c in connectors().values() if c.listed]
        return Response([connector_out(c, c.key in configured) for c in listed])


class ConnectorConfigApi(APIView):
    required = {"GET": "admin:tenant", "PUT": "admin:tenant"}

    class InputSerializer(serializers.Serializer):
        config = serializers.DictField()

    @extend_schema(responses=openapi.ConnectorConfigOut)
    def get(self, request: AuthenticatedRequest, key: str) -> Response:
        return Response(connector_config_redacted(tenant_id=request.user.tenant_id, key=key))

    @extend_schema(request=InputSerializer, responses=openapi.ConnectorConfigOut)
    def put(self, request: AuthenticatedRequest, key: str) -> Response:
        connector_require(key)  # an unknown connector is a 404 before the body is looked at
        body = self.InputSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        connector_config_set(user=request.user, key=key, config=body.validated_data["config"])
        return Response(connector_config_redacted(tenant_id=request.user.tenant_id, key=key))


class ConnectorTestApi(APIView):
    required = {"POST": "connectors:test"}

    class ContextSerializer(serializers.Serializer):
        case_data = serializers.DictField(required=False, default=dict)
        case_number = StrictCharField(required=False, allow_blank=True, default="")
        step_results = serializers.DictField(required=False, default=dict)

    class InputSerializer(serializers.Serializer):
        config = serializers.DictField(required=False, default=dict)
        dryRun = serializers.BooleanField(required=False, default=False)

    @extend_schema(request=InputSerializer, responses=openapi.TestOut)
    def post(self, request: AuthenticatedRequest, key: str, action: str) -> Response:
        connector_require(key, action)
        body = self.InputSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        context = self.ContextSerializer(data=request.data.get("context") or {})
        if not isinstance(request.data.get("context", {}), dict | type(None)) or not context.is_valid():
            raise ValidationFailed("context must be an object with case_data, case_number", field="context")
        data = body.validated_data
        out = connector_test(
            user=request.user, key=key, action=action, inputs=data["config"],
            context=context.validated_data, dry_run=data["dryRun"],
        )  # fmt: skip
        return Response(out)


class InvocationListApi(APIView):
    required = {"GET": "admin:tenant"}

    class FilterSerializer(QuerySerializer):
        connector = QueryTextField()
        caseId = QueryUUIDField(source="case_id")  # noqa: N815 (the API's spelling)

    @extend_schema(
        responses=openapi.InvocationPageOut,
        parameters=[
            *page_parameters(default_limit=50, max_limit=500),
            query("connector", TEXT, "a connector key"),
            query("caseId", UUID),
        ],
    )
    def get(self, request: AuthenticatedRequest) -> Response:
        page = get_page(request.query_params, default_limit=50, max_limit=500)
        filters = self.FilterSerializer(data=request.query_params)
        filters.is_valid(raise_exception=True)
        rows = invocation_list(tenant_id=request.user.member_tenant_id, **filters.validated_data)
        items = [invocation_out(r) for r in rows[page.offset : page.offset + page.limit]]
        return Response(list_body("data", items, rows.count(), page))


class DeliveryListApi(APIView):
    required = {"GET": "admin:tenant"}

    class FilterSerializer(QuerySerializer):
        status = QueryChoiceField(
            choices=dict(Delivery.STATUSES), message="status must be pending, sending, delivered or dead"
        )
        connector = QueryTextField()

    @extend_schema(
        responses=openapi.DeliveryPageOut,
        parameters=[
            *page_parameters(default_limit=50, max_limit=500),
            query("status", one_of(*dict(Delivery.STATUSES))),
            query("connector", TEXT, "a connector key"),
        ],
    )
    def get(self, request: AuthenticatedRequest) -> Response:
        page = get_page(request.query_params, default_limit=50, max_limit=500)
        filters = self.FilterSerializer(data=request.query_params)
        filters.is_valid(raise_exception=True)
        rows = delivery_list(
            tenant_id=request.user.member_tenant_id, **filters.validated_data
        ).select_related("step")
        items = [delivery_out(r) for r in rows[page.offset : page.offset + page.limit]]
        return Response(list_body("data", items, rows.count(), page))


class DeliveryReplayApi(APIView):
    required = {"POST": "admin:tenant"}

    @extend_schema(request=None, responses=openapi.DeliveryOut)
    def post(self, request: AuthenticatedRequest, delivery_id: str) -> Response:
        delivery = delivery_get(tenant_id=request.user.member_tenant_id, delivery_id=delivery_id)
        return Response(delivery_out(delivery_replay(user=request.user, delivery=delivery)))
