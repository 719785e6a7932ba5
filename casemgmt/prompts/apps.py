from django.apps import AppConfig
from django.utils.translation import gettext_lazy


class PromptsConfig(AppConfig):
    name = "casemgmt.prompts"
    verbose_name = gettext_lazy("Prompts")
    label = "prompts"
