from django.apps import AppConfig

from casemgmt.workflows import steps


class WorkflowsConfig(AppConfig):
    name = "casemgmt.workflows"
    label = "workflows"

    def ready(self) -> None:
        steps.load()  # fills the step-type registry; the step modules import models, so not before
