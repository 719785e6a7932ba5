from django.apps import AppConfig
from django.utils.translation import gettext_lazy


class VaultConfig(AppConfig):
    name = "casemgmt.vault"
    verbose_name = gettext_lazy("Vault")
    label = "vault"
