from django.apps import AppConfig

from casemgmt.accounts import openapi  # noqa: F401 - importing it registers the OpenAPI auth extension


class AccountsConfig(AppConfig):
    name = "casemgmt.accounts"
    label = "accounts"
