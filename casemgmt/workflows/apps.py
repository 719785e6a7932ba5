from django.apps import AppConfig
from django.utils.translation import gettext_lazy

from casemgmt.accounts.hooks import on_principal_disable
from casemgmt.cases.hooks import listener_register, workflow_binding_register
from casemgmt.workflows import steps


class WorkflowsConfig(AppConfig):
    name = "casemgmt.workflows"
    verbose_name = gettext_lazy("Workflows")
    label = "workflows"

    def ready(self) -> None:
        steps.load()  # fills the step-type registry; the step modules import models, so not before
        # App loading order: the services and the case binding import models, which cannot load
        # before the registry is ready.
        from casemgmt.workflows.case_binding import BINDING

        # App loading order, as above.
        from casemgmt.workflows.services import tasks_release_for_user

        # Accounts sits below workflows: disabling a principal reaches its open tasks through this hook.
        on_principal_disable(tasks_release_for_user)
        # Cases sits below workflows: a case binds, starts and halts its workflow through this binding.
        workflow_binding_register(BINDING)
        # App loading order, as above.
        from casemgmt.workflows.services.control import child_case_finished

        # A child case closing or cancelled finishes its parent's `case` step.
        listener_register(child_case_finished)
