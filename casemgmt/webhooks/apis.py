"""Inbound webhooks: the public receiver and the admin configuration (`admin:tenant`)."""

from __future__ import annotations

import io
import json
from dataclasses import replace
from typing import Any
from urllib.parse import parse_qsl
from uuid import UUID

from django.conf import settings
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.exceptions import ParseError
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from casemgmt.accounts.request import AuthenticatedRequest
from casemgmt.webhooks import openapi, selectors, services, signatures
from casemgmt.webhooks.models import InboundWebhook
from shared.api import errors
from shared.api.fields import JsonObjectField, StrictBooleanField, StrictCharField, StrictSerializer
from shared.api.openapi import errors_also, page_parameters
from shared.api.pagination import get_page, page_links
from shared.api.parsers import StrictJSONParser
from shared.api.time import iso
from shared.crypto import UndecryptableSecret

DELIVERY_HEADERS = ("X-Webhook-Delivery", "X-Delivery-Id")


def inbound_webhook_out(webhook: InboundWebhook, *, key: str | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {
        "id": str(webhook.id),
        "path": webhook.path,
        "url": f"{settings.PUBLIC_BASE_URL.rstrip('/')}/webhooks/{webhook.tenant_id}/{webhook.path}",
        "caseTypeKey": webhook.case_type_key,
        "mapping": webhook.mapping,
        "casePointer": webhook.case_pointer or None,
        "isActive": webhook.is_active,
        "secret": "***" if webhook.secret_encrypted else None,
        "signatureScheme": webhook.signature_scheme,
        "message": webhook.message or None,
        "keyPrefix": webhook.key_prefix,
        "principalId": str(webhook.principal_id),
        "createdAt": iso(webhook.created_at),
        "updatedAt": iso(webhook.updated_at),
    }
    if key is not None:
        out["key"] = key
    return out


def received_out(received: services.Received) -> dict[str, Any]:
    delivery = received.delivery
    case = delivery.case
    return {
        "status": "duplicate" if received.duplicate else delivery.outcome,
        "deliveryId": delivery.delivery_id,
        "caseId": str(case.id) if case else None,
        "caseNumber": case.case_number if case else None,
    }


def _values_of(data: dict[str, Any]) -> services.WebhookValues:
    return services.WebhookValues(
        path=data.get("path"),
        case_type_key=data.get("caseTypeKey"),
        mapping=data.get("mapping"),
        case_pointer=data.get("casePointer"),
        is_active=data.get("isActive"),
        signature_scheme=data.get("signatureScheme"),
        message=data.get("message"),
    )


class InboundWebhookInput(StrictSerializer):
    path = StrictCharField(max_length=200)
    caseTypeKey = StrictCharField(max_length=100)
    # {target pointer in case data: source pointer in the payload}; {} takes the whole payload.
    mapping = JsonObjectField(required=False)
    casePointer = StrictCharField(required=False, allow_blank=True, max_length=200)
    isActive = StrictBooleanField(required=False)
    # The HMAC secret senders sign with; null or "" means deliveries are not signed.
    secret = StrictCharField(required=False, allow_null=True, allow_blank=True, max_length=256)
    # `standard`: only Standard Webhooks signatures (id and timestamp signed); `any` (the default,
    # so senders of the body-only X-Webhook-Signature keep working) takes every signed form.
    signatureScheme = serializers.ChoiceField(
        choices=[InboundWebhook.ANY_SIGNATURE, InboundWebhook.STANDARD_SIGNATURE], required=False
    )
    # A message name: deliveries naming a case complete its active wait step for that message.
    message = StrictCharField(required=False, allow_blank=True, max_length=100)


class InboundWebhookListCreateApi(APIView):
    required = {"GET": "admin:tenant", "POST": "admin:tenant"}

    InputSerializer = InboundWebhookInput

    @extend_schema(
        operation_id="inbound_webhooks_list",
        responses=openapi.InboundWebhookPageOut,
        parameters=page_parameters(),
    )
    def get(self, request: AuthenticatedRequest) -> Response:
        page = get_page(request.query_params, default_limit=25, max_limit=100)
        webhooks = selectors.inbound_webhook_list(tenant_id=request.user.tenant_id)
        total = webhooks.count()
        rows = webhooks[page.offset : page.offset + page.limit]
        next_url, _ = page_links(request, page, total)
        return Response({"data": [inbound_webhook_out(w) for w in rows], "total": total, "next": next_url})

    @extend_schema(request=InboundWebhookInput, responses={201: openapi.InboundWebhookOut})
    def post(self, request: AuthenticatedRequest) -> Response:
        body = self.InputSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        data = body.validated_data
        webhook, key = services.inbound_webhook_create(
            tenant=request.user.member_tenant,
            actor=request.user,
            values=_values_of({"mapping": {}, **data}),
            secret=data.get("secret"),
        )
        return Response(inbound_webhook_out(webhook, key=key), status=201)


class InboundWebhookDetailApi(APIView):
    required = {"GET": "admin:tenant", "PUT": "admin:tenant", "DELETE": "admin:tenant"}

    class InputSerializer(InboundWebhookInput):
        # PUT changes only the fields it sends; `secret` present (even null) replaces the secret.
        rotateKey = StrictBooleanField(required=False, default=False)

    @extend_schema(responses=openapi.InboundWebhookOut)
    def get(self, request: AuthenticatedRequest, webhook_id: UUID) -> Response:
        webhook = selectors.inbound_webhook_get(tenant_id=request.user.tenant_id, webhook_id=webhook_id)
        return Response(inbound_webhook_out(webhook))

    @extend_schema(request=InputSerializer, responses=openapi.InboundWebhookOut)
    def put(self, request: AuthenticatedRequest, webhook_id: UUID) -> Response:
        webhook = selectors.inbound_webhook_get(tenant_id=request.user.tenant_id, webhook_id=webhook_id)
        body = self.InputSerializer(data=request.data, partial=True)
        body.is_valid(raise_exception=True)
        data = body.validated_data
        webhook, key = services.inbound_webhook_update(
            webhook=webhook,
            actor=request.user,
            values=_values_of(data),
            secret=data.get("secret"),
            change_secret="secret" in data,
            rotate_key=data.get("rotateKey", False),
        )
        return Response(inbound_webhook_out(webhook, key=key))

    @extend_schema(responses={204: None})
    def delete(self, request: AuthenticatedRequest, webhook_id: UUID) -> Response:
        webhook = selectors.inbound_webhook_get(tenant_id=request.user.tenant_id, webhook_id=webhook_id)
        services.inbound_webhook_delete(webhook=webhook, actor=request.user)
        return Response(status=204)


# --- the public receiver ----------------------------------------------------------------------


def _raw_body(request: Request) -> bytes:
    limit = settings.WEBHOOK_MAX_BODY_BYTES
    declared = request.META.get("CONTENT_LENGTH") or "0"
    if not declared.isdigit() or int(declared) > limit:
        raise errors.PayloadTooLarge(f"The body must be at most {limit} bytes.")
    body = request.body
    if len(body) > limit:  # a sender that declared less than it sent
        raise errors.PayloadTooLarge(f"The body must be at most {limit} bytes.")
    return body


def _signed(request: Request, webhook: InboundWebhook, body: bytes) -> signatures.Signed:
    """The verified signature's replay guard; a form without a signed id takes the sender's
    unsigned delivery id (X-Webhook-Delivery or X-Delivery-Id), if any, as before."""
    try:
        signed = signatures.verify(webhook, body, request.headers)
    except UndecryptableSecret:  # encrypted under a key no longer configured
        raise errors.NotConfigured("The webhook secret cannot be read; set it again.") from None
    if signed.delivery_id is None:
        value = next((request.headers[h] for h in DELIVERY_HEADERS if request.headers.get(h)), None)
        if value is not None:
            signed = replace(signed, delivery_id=signatures.check_delivery_id(value))
    return signed


def _payload(request: Request, body: bytes) -> Any:
    """JSON (any JSON or text media type, or none) or a form-encoded body as an object of strings."""
    media_type = (request.content_type or "").split(";")[0].strip().lower()
    if media_type == "application/x-www-form-urlencoded":
        try:
            text = body.decode("utf-8")
        except UnicodeDecodeError:
            raise errors.ValidationFailed("the form body is not UTF-8", field="body") from None
        # Through the JSON parser too, which refuses what the database cannot store (NUL characters).
        body = json.dumps(dict(parse_qsl(text, keep_blank_values=True))).encode()
    elif media_type and media_type != "text/plain" and not media_type.endswith(("/json", "+json")):
        raise errors.UnsupportedMediaType(f"Send JSON or a form; {media_type} is not accepted.")
    try:
        return StrictJSONParser().parse(io.BytesIO(body))
    except ParseError as exc:
        raise errors.ValidationFailed(f"Malformed request body: {exc.detail}", field="body") from None


def _header(name: str, description: str) -> OpenApiParameter:
    return OpenApiParameter(name, str, OpenApiParameter.HEADER, required=False, description=description)


class WebhookReceiveApi(APIView):
    """Public: a delivery is identified by its URL and key (header X-Webhook-Key or query `key`),
    and, when the webhook has a secret, by its signature (the forms in `signatures`): a bad, missing
    or stale one is 401; a repeated signed id or body-only signature is accepted with no effect."""

    authentication_classes: list = []
    required = {"POST": None}

    @extend_schema(
        operation_id="webhooks_receive",
        description=(
            "Signed deliveries (webhook with a secret) use one of: Standard Webhooks (`webhook-id`, "
            "`webhook-timestamp`, `webhook-signature: v1,<base64 HMAC-SHA256 of id.timestamp.body>`); "
            "`X-Webhook-Id` + `X-Webhook-Timestamp` + `X-Webhook-Signature: sha256=<hex of "
            "id.timestamp.body>`; or `X-Webhook-Signature: sha256=<hex of the raw body>` (not when the "
            "webhook's signatureScheme is `standard`). A timestamp more than 5 minutes away, a bad "
            "signature or a wrong key: 401. A signed id already taken, or the same body-only signed "
            'request again: 202 with status "duplicate" and no effect.'
        ),
        request={"application/json": dict},
        parameters=[
            _header("X-Webhook-Key", "The webhook's key (or the `key` query parameter)."),
            _header("X-Webhook-Signature", "sha256=<hex>: of the raw body, or of id.timestamp.body."),
            _header("X-Webhook-Id", "The signed delivery id of the timestamped sha256= form."),
            _header("X-Webhook-Timestamp", "Unix seconds, signed, in the timestamped sha256= form."),
            _header("X-Webhook-Delivery", "The sender's delivery id for an unsigned or body-only delivery."),
            _header("webhook-id", "Standard Webhooks message id (the delivery id)."),
            _header("webhook-timestamp", "Standard Webhooks Unix seconds."),
            _header("webhook-signature", "Standard Webhooks `v1,<base64>` signatures, space-separated."),
            OpenApiParameter("key", str, OpenApiParameter.QUERY, required=False),
        ],
        responses={202: openapi.DeliveryAcceptedOut},
        extensions=errors_also(401),
    )
    def post(self, request: Request, tenant_id: UUID, path: str) -> Response:
        webhook = selectors.inbound_webhook_receiver(tenant_id=tenant_id, path=path)
        key = request.headers.get("X-Webhook-Key") or request.query_params.get("key")
        if not services.key_matches(webhook, key):
            raise errors.NotAuthenticated("Invalid or missing webhook key.")
        body = _raw_body(request)
        signed = _signed(request, webhook, body)
        received = services.inbound_webhook_receive(
            webhook=webhook, signed=signed, payload=_payload(request, body)
        )
        return Response(received_out(received), status=202)
