from django.apps import AppConfig


class WorkflowsConfig(AppConfig):
    name = "casemgmt.workflows"
    label = "workflows"
