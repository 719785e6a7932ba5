from django.apps import AppConfig


class AccountsConfig(AppConfig):
    name = "casemgmt.accounts"
    label = "accounts"

    def ready(self) -> None:
        from casemgmt.accounts import openapi  # noqa: F401 - registers the OpenAPI auth extension
