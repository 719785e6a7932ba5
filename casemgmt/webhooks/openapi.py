"""Documentation-only serializers: the response shapes in the OpenAPI document. The views render
plain dicts of these shapes with the `*_out` functions of `apis`."""

from __future__ import annotations

from rest_framework import serializers


class InboundWebhookOut(serializers.Serializer):
    id = serializers.UUIDField()
    path = serializers.CharField()
    url = serializers.URLField(help_text="Where senders POST; give the key as X-Webhook-Key or ?key=.")
    caseTypeKey = serializers.CharField()
    mapping = serializers.DictField(child=serializers.CharField())
    casePointer = serializers.CharField(allow_null=True)
    isActive = serializers.BooleanField()
    secret = serializers.CharField(allow_null=True, help_text='"***" when deliveries must be signed')
    signatureScheme = serializers.ChoiceField(
        choices=["any", "standard"],
        help_text="standard: Standard Webhooks signatures only; any: the body-only X-Webhook-Signature too",
    )
    message = serializers.CharField(
        allow_null=True, help_text="deliveries naming a case complete its active wait step for this message"
    )
    keyPrefix = serializers.CharField()
    principalId = serializers.UUIDField()
    createdAt = serializers.DateTimeField()
    updatedAt = serializers.DateTimeField()
    key = serializers.CharField(required=False, help_text="Only on creation and key rotation.")


class InboundWebhookPageOut(serializers.Serializer):
    data = InboundWebhookOut(many=True)  # type: ignore[assignment]  # a declared field: DRF's metaclass pops it from the class
    total = serializers.IntegerField()
    next = serializers.URLField(allow_null=True)


class DeliveryAcceptedOut(serializers.Serializer):
    status = serializers.ChoiceField(choices=["created", "merged", "message", "duplicate"])
    deliveryId = serializers.CharField(allow_null=True)
    caseId = serializers.UUIDField(allow_null=True)
    caseNumber = serializers.CharField(allow_null=True)
