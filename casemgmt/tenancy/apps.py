from typing import Any

from django.apps import AppConfig
from django.db import connections
from django.db.models.signals import post_migrate

from casemgmt.tenancy import rls


class TenancyConfig(AppConfig):
    name = "casemgmt.tenancy"
    label = "tenancy"

    def ready(self) -> None:
        # After every migrate (all apps' tables exist by then): row-level security on each tenant table.
        post_migrate.connect(_install_row_level_security, sender=self)


def _install_row_level_security(using: str = "default", **kwargs: Any) -> None:
    rls.install(connections[using])
