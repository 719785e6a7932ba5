"""OpenAPI shapes of the webhook endpoints (documentation only: the views build plain dicts). The
secret and headers are write-only, so no response shape names them."""

from rest_framework import serializers


class WebhookOut(serializers.Serializer):
    id = serializers.CharField()
    name = serializers.CharField()
    url = serializers.CharField()
    events = serializers.ListField(child=serializers.CharField())
    filters = serializers.DictField(child=serializers.CharField())
    created_at = serializers.DateTimeField()


class WebhookList(serializers.Serializer):
    webhooks = WebhookOut(many=True)
    total = serializers.IntegerField()
    limit = serializers.IntegerField()
    offset = serializers.IntegerField()


class WebhookDeleted(serializers.Serializer):
    success = serializers.BooleanField()
    message = serializers.CharField()


class DeliveryAttemptOut(serializers.Serializer):
    number = serializers.IntegerField()
    started_at = serializers.DateTimeField()
    status_code = serializers.IntegerField(allow_null=True)
    latency_ms = serializers.FloatField()
    error = serializers.CharField(allow_null=True)
    succeeded = serializers.BooleanField()


class DeliveryOut(serializers.Serializer):
    id = serializers.CharField()
    event = serializers.CharField()
    event_id = serializers.IntegerField()
    status = serializers.CharField()
    attempts = serializers.IntegerField()
    created_at = serializers.DateTimeField()
    completed_at = serializers.DateTimeField(allow_null=True)
    next_attempt_at = serializers.DateTimeField(allow_null=True, help_text="Only while pending.")
    attempt_log = DeliveryAttemptOut(many=True)


class DeliveryList(serializers.Serializer):
    deliveries = DeliveryOut(many=True)
    total = serializers.IntegerField()
    limit = serializers.IntegerField()
    offset = serializers.IntegerField()
