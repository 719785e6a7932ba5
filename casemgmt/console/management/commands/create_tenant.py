from django.core.management.base import BaseCommand, CommandError

from casemgmt.accounts.tenants import tenant_create
from shared.api.errors import ApplicationError


class Command(BaseCommand):
    help = "Create a tenant with its default roles, themes, terminology, branding and first Admin."

    def add_arguments(self, parser):
        parser.add_argument("--name", required=True)
        parser.add_argument("--admin-email", required=True)
        parser.add_argument("--admin-password", required=True)
        parser.add_argument("--admin-name", default="")

    def handle(self, *args, **options):
        try:
            tenant = tenant_create(
                name=options["name"],
                admin_email=options["admin_email"],
                admin_password=options["admin_password"],
                admin_display_name=options["admin_name"],
            )
        except ApplicationError as exc:
            raise CommandError(exc.message) from None
        self.stdout.write(
            self.style.SUCCESS(f"Created tenant {tenant.name} ({tenant.id}); admin {options['admin_email']}")
        )
