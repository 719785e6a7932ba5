"""Used by `make run`: creates a console admin when the orchestrator has no user yet, and prints
how to sign in. The generated password is kept in var/ so later runs can print it again. With
`--demo-dag`, an empty orchestrator also gets a small demo DAG, so a new user can schedule one and
watch its graph and logs from the console without defining anything first."""

import json
import secrets
from pathlib import Path

from django.conf import settings
from django.contrib.auth.models import User
from django.core.management.base import BaseCommand

from orchestrator.definitions.models import Dag, TaskDefinition
from orchestrator.security.services import user_create
from orchestrator.system.definitions import sync_apply, sync_plan
from shared.definitions.files import read_documents

USERNAME = "admin"
# The repository's examples/ folder (make run runs from a checkout).
DEMO_EXAMPLE = Path(__file__).resolve().parents[4] / "examples" / "orchestrator" / "demo.yaml"


def create_demo_dag() -> None:
    # Through the definitions sync, as a user would apply the example folder.
    sync_apply(sync_plan(read_documents(DEMO_EXAMPLE)))


class Command(BaseCommand):
    help = "Create an orchestrator console admin if there is no user, then print how to sign in."

    def add_arguments(self, parser):
        parser.add_argument(
            "--base-url", default="http://localhost:3000", help="Where the orchestrator listens."
        )
        parser.add_argument("--demo-dag", action="store_true", help="Add a demo DAG when there is none.")

    def handle(self, *args, **options):
        base = options["base_url"].rstrip("/")
        credentials_file = settings.VAR_DIR / "console-credentials.json"
        if not User.objects.exists():
            password = secrets.token_urlsafe(12)
            user_create(username=USERNAME, password=password, role="admin")
            credentials_file.write_text(json.dumps({"username": USERNAME, "password": password}))
            credentials_file.chmod(0o600)
        if options["demo_dag"] and not (Dag.objects.exists() or TaskDefinition.objects.exists()):
            create_demo_dag()
            self.stdout.write(f"Orchestrator: created the demo DAG ({base}/console/dags/demo)")
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
