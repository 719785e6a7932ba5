from django.apps import AppConfig


class PromptsConfig(AppConfig):
    name = "casemgmt.prompts"
    label = "prompts"
