from django.core.management.base import BaseCommand, CommandError

from orchestrator.security.principals import ROLES
from orchestrator.security.services import api_key_create
from shared.api.errors import ApplicationError


class Command(BaseCommand):
    help = "Create an orchestrator API key. The key is printed once and stored only as a hash."

    def add_arguments(self, parser):
        parser.add_argument("--name", required=True)
        parser.add_argument("--role", required=True, choices=ROLES)

    def handle(self, *args, **options):
        try:
            key, plaintext = api_key_create(name=options["name"], role=options["role"])
        except ApplicationError as exc:
            raise CommandError(exc.message) from None
        self.stderr.write(f"Created API key {key.name!r} with role {key.role}. It is shown only once:")
        self.stdout.write(plaintext)
