from django.apps import AppConfig


class SecurityConfig(AppConfig):
    name = "orchestrator.security"
    label = "orch_security"

    def ready(self) -> None:
        from orchestrator.security import openapi  # noqa: F401 - registers the OpenAPI auth extension
