"""Webhook registrations. The secret and headers are write-only."""

from __future__ import annotations

import re
from typing import Any

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from orchestrator.security.principals import actor_name
from orchestrator.webhooks import openapi, selectors, services
from orchestrator.webhooks.guard import UnsafeTarget, check_url
from orchestrator.webhooks.models import EVENT_TYPES, FILTER_KEYS, Delivery, DeliveryAttempt, Webhook
from shared.api.fields import StrictCharField
from shared.api.openapi import page_parameters
from shared.api.pagination import get_page, list_body
from shared.api.time import iso

SUBSCRIBABLE = (*EVENT_TYPES, "task.cancelled", "dag.cancelled", "dag.paused", "dag.resumed")
HEADER_NAME = re.compile(r"^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,100}$")
RESERVED_HEADERS = {"host", "content-type", "content-length", "user-agent", "transfer-encoding", "connection"}


def webhook_out(webhook: Webhook) -> dict[str, Any]:
    """Without the secret and headers: they are write-only."""
    return {
        "id": webhook.id,
        "name": webhook.name,
        "url": webhook.url,
        "events": webhook.events,
        "filters": webhook.filters,
        "created_at": iso(webhook.created_at),
    }


def delivery_attempt_out(attempt: DeliveryAttempt) -> dict[str, Any]:
    return {
        "number": attempt.number,
        "started_at": iso(attempt.started_at),
        "status_code": attempt.status_code,
        "latency_ms": attempt.latency_ms,
        "error": attempt.error or None,
        "succeeded": attempt.succeeded,
    }


def delivery_out(delivery: Delivery) -> dict[str, Any]:
    return {
        "id": str(delivery.id),
        "event": delivery.event.type,
        "event_id": delivery.event_id,
        "status": delivery.status,
        "attempts": delivery.attempts,
        "created_at": iso(delivery.created_at),
        "completed_at": iso(delivery.completed_at),
        "next_attempt_at": iso(delivery.next_attempt_at) if delivery.status == "pending" else None,
        "attempt_log": [delivery_attempt_out(a) for a in delivery.attempt_rows.all()],
    }


class WebhookListCreateApi(APIView):
    """GET needs viewer; POST needs admin (admins may do everything viewers and operators may not)."""

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
        responses=openapi.WebhookList,
        parameters=page_parameters(default_limit=50, max_limit=500),
    )
    def get(self, request: Request) -> Response:
        page = get_page(request.query_params, default_limit=50, max_limit=500)
        webhooks = selectors.webhook_list()
        total = webhooks.count()
        items = webhooks[page.offset : page.offset + page.limit]
        return Response(list_body("webhooks", [webhook_out(w) for w in items], total, page))

    @extend_schema(responses={201: openapi.WebhookOut})
    def post(self, request: Request) -> Response:
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        webhook = services.webhook_create(actor=actor_name(request.user), **serializer.validated_data)
        return Response(webhook_out(webhook), status=201)


class WebhookDetailApi(APIView):
    @extend_schema(responses=openapi.WebhookOut)
    def get(self, request: Request, webhook_id: str) -> Response:
        return Response(webhook_out(selectors.webhook_get(webhook_id=webhook_id)))

    @extend_schema(responses={200: openapi.WebhookDeleted})
    def delete(self, request: Request, webhook_id: str) -> Response:
        services.webhook_delete(actor=actor_name(request.user), webhook_id=webhook_id)
        return Response({"success": True, "message": f"Webhook {webhook_id} deleted."})


class DeliveryListApi(APIView):
    """Each delivery with every attempt (status code, latency, error): what an operator debugs with."""

    @extend_schema(
        responses=openapi.DeliveryList, parameters=page_parameters(default_limit=50, max_limit=500)
    )
    def get(self, request: Request, webhook_id: str) -> Response:
        webhook = selectors.webhook_get(webhook_id=webhook_id)
        page = get_page(request.query_params, default_limit=50, max_limit=500)
        deliveries = selectors.delivery_list(webhook=webhook)
        total = deliveries.count()
        items = deliveries[page.offset : page.offset + page.limit]
        return Response(list_body("deliveries", [delivery_out(d) for d in items], total, page))
