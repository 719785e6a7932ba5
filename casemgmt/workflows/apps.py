from django.apps import AppConfig

from casemgmt.accounts.hooks import on_principal_disable
from casemgmt.workflows import steps


class WorkflowsConfig(AppConfig):
    name = "casemgmt.workflows"
    label = "workflows"

    def ready(self) -> None:
        steps.load()  # fills the step-type registry; the step modules import models, so not before
        # App loading order: the services import models, which cannot load before the registry is ready.
        from casemgmt.workflows.services import tasks_release_for_user

        # Accounts sits below workflows: disabling a principal reaches its open tasks through this hook.
        on_principal_disable(tasks_release_for_user)
