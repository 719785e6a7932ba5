"""Re-encrypts every inbound webhook secret with the first of CASE_FIELD_ENCRYPTION_KEYS."""

from django.core.management.base import BaseCommand

from casemgmt.webhooks.services import inbound_webhook_secrets_rotate


class Command(BaseCommand):
    help = "Re-encrypt inbound webhook secrets with the current (first) encryption key."

    def handle(self, *args, **options) -> None:
        count = inbound_webhook_secrets_rotate()
        self.stdout.write(f"re-encrypted {count} inbound webhook secret(s)")
