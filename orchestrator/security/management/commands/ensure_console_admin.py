"""Used by `make run`: creates a console admin when the orchestrator has no user yet, and prints
how to sign in. The generated password is kept in var/ so later runs can print it again."""

import json
import secrets

from django.conf import settings
from django.contrib.auth.models import User
from django.core.management.base import BaseCommand

from orchestrator.security.services import user_create

USERNAME = "admin"


class Command(BaseCommand):
    help = "Create an orchestrator console admin if there is no user, then print how to sign in."

    def add_arguments(self, parser):
        parser.add_argument(
            "--base-url", default="http://localhost:3000", help="Where the orchestrator listens."
        )

    def handle(self, *args, **options):
        base = options["base_url"].rstrip("/")
        credentials_file = settings.VAR_DIR / "console-credentials.json"
        if not User.objects.exists():
            password = secrets.token_urlsafe(12)
            user_create(username=USERNAME, password=password, role="admin")
            credentials_file.write_text(json.dumps({"username": USERNAME, "password": password}))
            credentials_file.chmod(0o600)
        if credentials_file.exists():
            creds = json.loads(credentials_file.read_text())
            self.stdout.write(
                f"\nOrchestrator console:  {base}/console/\n"
                f"  Username {creds['username']}  password {creds['password']}  (admin role; also valid at {base}/admin/)\n"
            )
        else:
            self.stdout.write(
                f"Orchestrator console: {base}/console/ (users exist already; sign in with yours)"
            )
