"""The report role's rights on the `reporting` views, granted again on a database that has the
views but lost their grants (a dump loaded without privileges, as restore does). The statements
are the migration's own, which are idempotent."""

from __future__ import annotations

from importlib import import_module

from django.db.backends.base.base import BaseDatabaseWrapper


def install_grants(conn: BaseDatabaseWrapper) -> None:
    if conn.vendor != "postgresql":
        return
    migration = import_module("casemgmt.reports.migrations.0002_reporting_views")
    role = migration.role_name()
    if not role:
        return
    with conn.cursor() as cursor:
        cursor.execute("SELECT 1 FROM pg_namespace WHERE nspname = 'reporting'")
        if cursor.fetchone() is None:
            return  # a schema from before the views: the next migrate creates them, with the grants
        cursor.execute(migration.ROLE_SQL.replace("{role}", role))


def grants_ready(conn: BaseDatabaseWrapper) -> bool:
    """The role exists and may read both views."""
    migration = import_module("casemgmt.reports.migrations.0002_reporting_views")
    role = migration.role_name()
    if conn.vendor != "postgresql" or not role:
        return True
    with conn.cursor() as cursor:
        cursor.execute(
            "SELECT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = %s) AND ("
            " to_regclass('reporting.cases') IS NULL OR ("
            "  has_table_privilege(%s, 'reporting.cases', 'SELECT')"
            "  AND has_table_privilege(%s, 'reporting.tasks', 'SELECT')))",
            [role, role, role],
        )
        return bool(cursor.fetchone()[0])
