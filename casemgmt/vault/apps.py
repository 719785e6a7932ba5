from django.apps import AppConfig


class VaultConfig(AppConfig):
    name = "casemgmt.vault"
    label = "vault"
