from typing import Any

from django.apps import AppConfig
from django.db import connections
from django.db.backends.signals import connection_created
from django.db.models.signals import post_migrate
from django.utils.translation import gettext_lazy

from casemgmt.tenancy import rls


class TenancyConfig(AppConfig):
    name = "casemgmt.tenancy"
    verbose_name = gettext_lazy("Tenancy")
    label = "tenancy"

    def ready(self) -> None:
        # After every migrate (all apps' tables exist by then): row-level security on each tenant table.
        post_migrate.connect(_install_row_level_security, sender=self)
        # A pooled connection an earlier request left in its tenant context is switched back when taken.
        connection_created.connect(_switch_back_on_checkout)


def _switch_back_on_checkout(sender: Any, connection: Any, **kwargs: Any) -> None:
    if rls.enabled(connection):
        rls.switch_back_on_checkout(sender, connection, **kwargs)


def _install_row_level_security(using: str = "default", **kwargs: Any) -> None:
    rls.install(connections[using])
