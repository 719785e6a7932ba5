"""Used by `make run`: creates a console admin when the orchestrator has no user yet, and prints
how to sign in. The generated password is kept in var/ so later runs can print it again. With
`--demo-dag`, an empty orchestrator also gets a small demo DAG, so a new user can schedule one and
watch its graph and logs from the console without defining anything first."""

import json
import secrets

from django.conf import settings
from django.contrib.auth.models import User
from django.core.management.base import BaseCommand

from orchestrator.definitions import services as definitions
from orchestrator.definitions.models import Dag, TaskDefinition
from orchestrator.security.services import user_create

USERNAME = "admin"
DEMO_TASKS = [  # (id, command, dependencies, parameters)
    ("demo-fetch", "echo fetching from $SOURCE; sleep 1; echo fetched", [], {"SOURCE": "example"}),
    ("demo-count", "for i in 1 2 3 4 5 6 7 8; do echo counted $i; sleep 0.5; done", ["demo-fetch"], {}),
    ("demo-check", "echo checking; sleep 2; echo all good", ["demo-fetch"], {}),
    ("demo-report", "echo report for $SOURCE done", ["demo-count", "demo-check"], {"SOURCE": "example"}),
]


def create_demo_dag() -> None:
    for task_id, command, dependencies, parameters in DEMO_TASKS:
        definitions.task_definition_put(
            task_id=task_id, name=task_id, description="Created by make run as an example.", command=command,
            dependencies=dependencies, parameters=parameters, queue="default",
        )  # fmt: skip
    definitions.dag_put(
        dag_id="demo", name="Demo", description="Created by make run: schedule it from the console.",
        tasks=[{"id": "demo-report", "parameters": {}}], context=None, tags=["demo"],
    )  # fmt: skip


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
