"""Used by `make run`: creates a demo tenant and admin when the database has no tenant yet, and
prints how to log in; the tenant starts with cases waiting in its console inbox. The generated password is kept in var/ so later runs can print it again."""

import json
import secrets

from django.conf import settings
from django.core.management.base import BaseCommand

from casemgmt.accounts.models import User
from casemgmt.accounts.tenants import tenant_create
from casemgmt.console.demo import demo_work_seed
from casemgmt.tenancy.models import Tenant

EMAIL = "admin@demo.local"


class Command(BaseCommand):
    help = "Create a demo tenant and admin if there is no tenant, then print login instructions."

    def add_arguments(self, parser):
        parser.add_argument(
            "--base-url", default="http://localhost:8000", help="Where the case service listens."
        )

    def handle(self, *args, **options):
        base = options["base_url"].rstrip("/")
        credentials_file = settings.VAR_DIR / "demo-credentials.json"
        if not Tenant.objects.exists():
            password = secrets.token_urlsafe(12)
            tenant = tenant_create(
                name="Demo", admin_email=EMAIL, admin_password=password, admin_display_name="Demo Admin"
            )
            demo_work_seed(admin=User.objects.get(tenant=tenant, email=EMAIL))
            credentials_file.write_text(json.dumps({"email": EMAIL, "password": password}))
            credentials_file.chmod(0o600)
        if credentials_file.exists():
            creds = json.loads(credentials_file.read_text())
            self.stdout.write(
                f"\nCase service:  {base}   (API docs: {base}/docs)\n"
                f"  Log in:  curl -s -X POST {base}/auth/login -H 'Content-Type: application/json' "
                f"-d '{json.dumps(creds)}'\n"
                f"  Email {creds['email']}  password {creds['password']}"
                f"  (sign in at {base}/console/ or {base}/admin/)\n"
            )
        else:
            self.stdout.write("Case service: tenants already exist; log in with your admin account.")
