"""OpenAPI shapes of the agents and queues endpoints (documentation only; the views build plain
dicts)."""

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


class AgentRetired(serializers.Serializer):
    success = serializers.BooleanField()
    message = serializers.CharField()


class QueuedTask(serializers.Serializer):
    task_run_id = serializers.CharField()
    dag_run_id = serializers.CharField()
    position = serializers.IntegerField()


class QueueOut(serializers.Serializer):
    name = serializers.CharField()
    length = serializers.IntegerField()
    consumer_count = serializers.IntegerField()
    tasks = QueuedTask(many=True)


class QueueList(serializers.Serializer):
    queues = QueueOut(many=True)
    total = serializers.IntegerField()
    limit = serializers.IntegerField()
    offset = serializers.IntegerField()
