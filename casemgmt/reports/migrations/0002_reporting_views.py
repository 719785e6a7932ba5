"""PostgreSQL only: the schema `reporting` with the views report queries read, and a role that can
read nothing else.

Each view shows only the rows of the tenant named by the transaction's `app.tenant_id` setting (no
setting: no rows), so the tenant filter lives in the database, not in the query text. The views are
security barriers: a condition in a query cannot be evaluated before the tenant filter.

The role (setting REPORTS_DB_ROLE) gets USAGE on the schema and SELECT on the two views only. It is
created when the migrating user may create roles (superuser or CREATEROLE); otherwise a database
administrator creates it once and grants it to the service's user (docs/reports.md). Roles belong
to the whole PostgreSQL cluster, so an existing one is reused and never dropped here.
"""

from __future__ import annotations

import re

from django.conf import settings
from django.db import migrations

CASES_VIEW = """
CREATE OR REPLACE VIEW reporting.cases WITH (security_barrier = true) AS
SELECT c.id, c.case_number::text AS case_number, c.display_name::text AS display_name,
       t.key::text AS case_type, t.version::integer AS case_type_version, c.status::text AS status,
       c.data, c.outcome::text AS outcome, c.created_by_id AS created_by, c.created_at, c.updated_at,
       c.sla_deadline, c.closed_at
FROM public.cases_case c JOIN public.cases_casetype t ON t.id = c.case_type_id
WHERE c.tenant_id = NULLIF(current_setting('app.tenant_id', true), '')::uuid
"""

TASKS_VIEW = """
CREATE OR REPLACE VIEW reporting.tasks WITH (security_barrier = true) AS
SELECT s.id, s.case_id, s.step_id::text AS step_id, s.name::text AS name, s.status::text AS status,
       s.role::text AS role, s.assigned_to_id AS assigned_to, s.claimed_at, s.due_at, s.activated_at,
       s.completed_at, s.completed_by_id AS completed_by, s.outcome::text AS outcome, s.escalated,
       s.escalated_at
FROM public.workflows_casestep s
WHERE s.is_task AND s.tenant_id = NULLIF(current_setting('app.tenant_id', true), '')::uuid
"""

ROLE_SQL = """
DO $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = '{role}') THEN
    IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = current_user AND (rolsuper OR rolcreaterole)) THEN
      RAISE WARNING 'role {role} does not exist and % may not create it; report queries answer 503 until an administrator creates it', current_user;
      RETURN;
    END IF;
    BEGIN
      CREATE ROLE {role} NOLOGIN;
    EXCEPTION WHEN duplicate_object THEN
      NULL;  -- another database of this cluster created it at the same moment
    END;
  END IF;
  GRANT USAGE ON SCHEMA reporting TO {role};
  GRANT SELECT ON reporting.cases, reporting.tasks TO {role};
  -- The service's user must be a member of the role to SET ROLE to it (superusers always may).
  IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = current_user AND rolsuper) THEN
    BEGIN
      EXECUTE format('GRANT {role} TO %I', current_user);
    EXCEPTION WHEN OTHERS THEN
      RAISE WARNING 'could not grant role {role} to %: %; an administrator must grant it', current_user, SQLERRM;
    END;
  END IF;
END
$$;
"""


def role_name() -> str:
    role = settings.REPORTS_DB_ROLE
    if role and not re.fullmatch(r"[a-z_][a-z0-9_]{0,62}", role):
        raise ValueError("REPORTS_DB_ROLE must be a lower-case PostgreSQL identifier")
    return role


def forwards(apps, schema_editor) -> None:
    if schema_editor.connection.vendor != "postgresql":
        return  # SQLite makes its tenant views per run, on the report connection (sqlite_sandbox)
    schema_editor.execute("CREATE SCHEMA IF NOT EXISTS reporting")
    schema_editor.execute("REVOKE ALL ON SCHEMA reporting FROM PUBLIC")
    schema_editor.execute(CASES_VIEW)
    schema_editor.execute(TASKS_VIEW)
    if role_name():
        schema_editor.execute(ROLE_SQL.replace("{role}", role_name()), None)


def backwards(apps, schema_editor) -> None:
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute("DROP SCHEMA IF EXISTS reporting CASCADE")


class Migration(migrations.Migration):
    dependencies = [
        ("reports", "0001_initial"),
        ("cases", "0004_case_created_at_default"),
        ("workflows", "0003_casestep_attempt_deadline"),
    ]

    operations = [migrations.RunPython(forwards, backwards)]
