"""Re-encrypts every stored connector configuration with the first of CASE_FIELD_ENCRYPTION_KEYS."""

from django.core.management.base import BaseCommand

from casemgmt.connectors.services import connector_configs_rotate


class Command(BaseCommand):
    help = "Re-encrypt connector configurations with the current (first) encryption key."

    def handle(self, *args, **options) -> None:
        count = connector_configs_rotate()
        self.stdout.write(f"re-encrypted {count} connector configuration(s)")
