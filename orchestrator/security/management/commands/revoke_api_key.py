from django.core.management.base import BaseCommand, CommandError

from orchestrator.security.services import api_key_revoke
from shared.api.errors import ApplicationError


class Command(BaseCommand):
    help = "Revoke an orchestrator API key by name; requests using it get 401 from then on."

    def add_arguments(self, parser):
        parser.add_argument("--name", required=True)

    def handle(self, *args, **options):
        try:
            key = api_key_revoke(name=options["name"])
        except ApplicationError as exc:
            raise CommandError(exc.message) from None
        self.stdout.write(f"Revoked API key {key.name!r}.")
