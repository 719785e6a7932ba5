"""Serializers for the OpenAPI document only."""

from rest_framework import serializers


class CallbackOut(serializers.Serializer):
    applied = serializers.BooleanField(help_text="false: a replay, or a run no step waits for")
