from django.apps import AppConfig


class WorkflowsConfig(AppConfig):
    name = "casemgmt.workflows"
    label = "workflows"

    def ready(self) -> None:
        from casemgmt.workflows import steps

        steps.load()  # fills the step-type registry
