from django.apps import AppConfig
from django.utils.translation import gettext_lazy


class DagsConfig(AppConfig):
    name = "casemgmt.dags"
    verbose_name = gettext_lazy("Dags")
    label = "dags"

    def ready(self) -> None:
        # App loading order: the step module imports models, which cannot load before the registry
        # is ready. Importing it registers the `dag` step type with workflows, which sits below dags.
        from casemgmt.dags import step  # noqa: F401
