"""OpenAPI shapes of the agents endpoint (documentation only; the view builds plain dicts)."""

from rest_framework import serializers


class AgentOut(serializers.Serializer):
    agent_id = serializers.CharField()
    status = serializers.ChoiceField(choices=["active", "offline"])
    last_heartbeat = serializers.DateTimeField()
    assigned_tasks = serializers.ListField(child=serializers.CharField())
    queues = serializers.ListField(child=serializers.CharField())
    tags = serializers.ListField(child=serializers.CharField())


class AgentList(serializers.Serializer):
    agents = AgentOut(many=True)
    total = serializers.IntegerField()
    limit = serializers.IntegerField()
    offset = serializers.IntegerField()
