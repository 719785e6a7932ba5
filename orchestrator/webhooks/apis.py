"""Webhook registrations (spec "Webhooks"). The secret and headers are write-only."""

from __future__ import annotations

import re

from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from orchestrator.webhooks import selectors, services
from orchestrator.webhooks.guard import UnsafeTarget, check_url
from orchestrator.webhooks.models import EVENT_TYPES, FILTER_KEYS
from shared.api.fields import StrictCharField
from shared.api.pagination import get_page, list_body
from shared.api.time import iso

SUBSCRIBABLE = (*EVENT_TYPES, "task.cancelled", "dag.cancelled")
HEADER_NAME = re.compile(r"^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,100}$")
RESERVED_HEADERS = {"host", "content-type", "content-length", "user-agent", "transfer-encoding", "connection"}


class WebhookOutputSerializer(serializers.Serializer):
    id = serializers.CharField()
    name = serializers.CharField()
    url = serializers.CharField()
    events = serializers.ListField(child=serializers.CharField())
    filters = serializers.DictField()
    created_at = serializers.SerializerMethodField()

    def get_created_at(self, obj) -> str | None:
        return iso(obj.created_at)


class WebhookListCreateApi(APIView):
    """GET needs viewer; POST needs admin (CONTRACT: admin: everything else)."""

    class InputSerializer(serializers.Serializer):
        name = StrictCharField(max_length=200)
        url = serializers.URLField(max_length=2000)
        events = serializers.ListField(child=serializers.ChoiceField(choices=SUBSCRIBABLE), allow_empty=False)
        secret = StrictCharField(max_length=500, trim_whitespace=False, write_only=True)
        headers = serializers.DictField(
            child=StrictCharField(max_length=2000, allow_blank=True), required=False, default=dict
        )
        filters = serializers.DictField(child=StrictCharField(max_length=128), required=False, default=dict)

        def validate_url(self, value: str) -> str:
            try:
                check_url(value)
            except UnsafeTarget as exc:
                raise serializers.ValidationError(str(exc)) from None
            return value

        def validate_headers(self, value: dict[str, str]) -> dict[str, str]:
            for name, header_value in value.items():
                if not HEADER_NAME.match(name):
                    raise serializers.ValidationError(f"{name!r} is not a valid header name")
                if name.lower() in RESERVED_HEADERS or name.lower().startswith("x-service-"):
                    raise serializers.ValidationError(
                        f"{name!r} is set by the service and cannot be overridden"
                    )
                if "\r" in header_value or "\n" in header_value:
                    raise serializers.ValidationError(f"header {name!r} must not contain line breaks")
            return value

        def validate_filters(self, value: dict[str, str]) -> dict[str, str]:
            unknown = sorted(set(value) - set(FILTER_KEYS))
            if unknown:
                raise serializers.ValidationError(f"unknown filter keys {unknown}; allowed: dag_id, task_id")
            return value

    @extend_schema(
        operation_id="api_webhooks_list",
        responses=inline_serializer(
            "WebhookList",
            {
                "webhooks": WebhookOutputSerializer(many=True),
                "total": serializers.IntegerField(),
                "limit": serializers.IntegerField(),
                "offset": serializers.IntegerField(),
            },
        ),
    )
    def get(self, request: Request) -> Response:
        page = get_page(request.query_params, default_limit=50, max_limit=500)
        webhooks = selectors.webhook_list()
        total = webhooks.count()
        items = webhooks[page.offset : page.offset + page.limit]
        return Response(list_body("webhooks", WebhookOutputSerializer(items, many=True).data, total, page))

    @extend_schema(responses={201: WebhookOutputSerializer})
    def post(self, request: Request) -> Response:
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        webhook = services.webhook_create(**serializer.validated_data)
        return Response(WebhookOutputSerializer(webhook).data, status=201)


class WebhookDetailApi(APIView):
    @extend_schema(responses=WebhookOutputSerializer)
    def get(self, request: Request, webhook_id: str) -> Response:
        return Response(WebhookOutputSerializer(selectors.webhook_get(webhook_id=webhook_id)).data)

    @extend_schema(
        responses=inline_serializer(
            "WebhookDeleted", {"success": serializers.BooleanField(), "message": serializers.CharField()}
        )
    )
    def delete(self, request: Request, webhook_id: str) -> Response:
        services.webhook_delete(webhook_id=webhook_id)
        return Response({"success": True, "message": f"Webhook {webhook_id} deleted."})


class DeliveryListApi(APIView):
    """Each delivery with every attempt (status code, latency, error): what an operator debugs with."""

    class OutputSerializer(serializers.Serializer):
        id = serializers.CharField()
        event = serializers.CharField(source="event.type")
        event_id = serializers.IntegerField()
        status = serializers.CharField()
        attempts = serializers.IntegerField()
        created_at = serializers.SerializerMethodField()
        completed_at = serializers.SerializerMethodField()
        next_attempt_at = serializers.SerializerMethodField()
        attempt_log = serializers.SerializerMethodField()

        def get_created_at(self, obj) -> str | None:
            return iso(obj.created_at)

        def get_completed_at(self, obj) -> str | None:
            return iso(obj.completed_at)

        def get_next_attempt_at(self, obj) -> str | None:
            return iso(obj.next_attempt_at) if obj.status == "pending" else None

        def get_attempt_log(self, obj) -> list[dict]:
            return [
                {
                    "number": a.number,
                    "started_at": iso(a.started_at),
                    "status_code": a.status_code,
                    "latency_ms": a.latency_ms,
                    "error": a.error or None,
                    "succeeded": a.succeeded,
                }
                for a in obj.attempt_rows.all()
            ]

    def get(self, request: Request, webhook_id: str) -> Response:
        webhook = selectors.webhook_get(webhook_id=webhook_id)
        page = get_page(request.query_params, default_limit=50, max_limit=500)
        deliveries = selectors.delivery_list(webhook=webhook)
        total = deliveries.count()
        items = deliveries[page.offset : page.offset + page.limit]
        return Response(list_body("deliveries", self.OutputSerializer(items, many=True).data, total, page))
