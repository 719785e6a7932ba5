"""Tenant isolation in the database: PostgreSQL row-level security on every tenant-owned table.

Every table with a `tenant_id` column (and the tenant table itself) carries the policy
`tenant_isolation`: a row is visible and writable only when its tenant is the connection's
`app.tenant_id` setting. Policies bind every role except table owners, superusers and BYPASSRLS
roles, so the service's own database user (which owns the tables: it runs `migrate`) is the
*system* context: migrations, backup/restore, Celery tasks, sweeps, login by email and inbound
webhooks resolving their tenant. An authenticated request switches its connection to the *tenant*
context: `SET ROLE` to `TENANT_DB_ROLE` (no ownership, no BYPASSRLS) and `app.tenant_id` set, so a
query that forgets its tenant filter returns nothing of another tenant. The request's end switches
back (`RowLevelSecurityMiddleware`); with a connection pool, the next taker of the connection does,
before its first statement (`end_request`).

Session-level settings (not `SET LOCAL`) because requests do not run in one transaction: services
own their transactions, and calls to outside systems run between them. Code outside a request that
acts for one tenant uses `tenant_transaction`, which is `SET LOCAL` in a transaction.

SQLite has no row-level security: everything here is a no-op there.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from uuid import UUID

from django.conf import settings
from django.db import DatabaseError, DataError, ProgrammingError, connection, transaction
from django.db.backends.base.base import BaseDatabaseWrapper

from shared.api import errors

POLICY = "tenant_isolation"
_TENANT = "NULLIF(current_setting('app.tenant_id', true), '')::uuid"
# Marks the connection wrapper the request switched, so the switch back touches only those.
_MARK = "_rls_tenant_id"
# On the database connection itself (psycopg's, which a pool hands from request to request): it may
# be in a tenant context. Cleared only by a switch back outside any transaction.
_DIRTY = "_rls_switched"
# On the wrapper while `enter_tenant` takes its connection, and whether that skipped a switch back.
_ENTERING = "_rls_entering"
_SKIPPED = "_rls_skipped_switch_back"
_TEAMS = "_rls_team_ids"


def role_name() -> str:
    role: str = settings.TENANT_DB_ROLE
    if role and not re.fullmatch(r"[a-z_][a-z0-9_]{0,62}", role):
        raise ValueError("TENANT_DB_ROLE must be a lower-case PostgreSQL identifier")
    return role


def enabled(conn: BaseDatabaseWrapper | None = None) -> bool:
    return (conn or connection).vendor == "postgresql"


# One statement each way (each is a round trip on every authenticated request): `set_config('role',
# ...)` is `SET ROLE` as a function, so it shares a SELECT with the tenant setting; 'none' is RESET ROLE.
_SWITCH = (
    "SELECT set_config('app.tenant_id', %s, false), set_config('app.team_ids', %s, false), "
    "set_config('role', %s, false)"
)
_SWITCH_TENANT_ONLY = "SELECT set_config('app.tenant_id', %s, false), set_config('app.team_ids', %s, false)"
_SWITCH_BACK = (
    "SELECT set_config('role', 'none', false), set_config('app.tenant_id', '', false), "
    "set_config('app.team_ids', '', false)"
)

# `app.team_ids`: the caller's team ids, comma-separated, or ALL_TEAMS for holders of `admin:*`
# and for the service's own work in a tenant (workers, sweeps). The `team_access` policies
# (cases migration 0007, workflows 0005) hide a case whose case type names `accessTeams` (the
# case's `access_teams` column) unless the setting shares one of them; a setting never made
# (empty, or unset) shares none, so a path that forgets it sees fewer cases, never more.
ALL_TEAMS = "*"


def enter_tenant(tenant_id: UUID | str, teams: str = "") -> None:
    """Switches this request's connection to the tenant context (until `leave_tenant` or
    `end_request`); `teams` is the caller's `app.team_ids` (see ALL_TEAMS)."""
    if not enabled():
        return
    role = role_name()
    setattr(connection, _ENTERING, True)
    try:
        with connection.cursor() as cursor:
            if role:
                _set_role(cursor, _SWITCH, [str(tenant_id), teams, role])
            else:
                cursor.execute(_SWITCH_TENANT_ONLY, [str(tenant_id), teams])
    except BaseException:
        if getattr(connection, _SKIPPED, False):
            # The pooled connection came still switched by an earlier request and this switch
            # failed: back to the pool with it, so any further query takes it through the check.
            connection.close()
        raise
    finally:
        setattr(connection, _ENTERING, False)
        setattr(connection, _SKIPPED, False)
    setattr(connection.connection, _DIRTY, True)
    setattr(connection, _MARK, str(tenant_id))
    setattr(connection, _TEAMS, teams)


def leave_tenant() -> None:
    """Back to the system context, if this connection was switched and is still open."""
    if getattr(connection, _MARK, None) is None:
        return
    setattr(connection, _MARK, None)
    if connection.connection is None:
        return  # closed: its session state went with it
    if connection.in_atomic_block and connection.needs_rollback:
        return  # the rollback of the outer transaction undoes the switch made inside it
    try:
        with connection.cursor() as cursor:
            cursor.execute(_SWITCH_BACK)
    except DatabaseError:
        # The connection broke (a database restart): dropping it drops its session state too, and
        # the response already written is not turned into a 500. No separate liveness check first:
        # it would be one more round trip on every request for what this catches anyway.
        connection.close()
        return
    if not connection.in_atomic_block:  # a rollback could still undo a switch back made inside one
        setattr(connection.connection, _DIRTY, False)


def end_request() -> None:
    """The request's end (`RowLevelSecurityMiddleware`). From a connection pool, the connection
    goes back to the pool still switched and marked so: whoever takes it next switches it back
    before their first statement (`switch_back_on_checkout`), unless what takes it is itself a
    switch, which sets both settings anyway. An authenticated request thus costs one statement
    for its tenant context instead of two. Without a pool (or inside a transaction) the switch
    back happens here."""
    if getattr(connection, _MARK, None) is None:
        return
    if getattr(connection, "pool", None) is None or connection.in_atomic_block:
        leave_tenant()
        return
    setattr(connection, _MARK, None)
    connection.close()  # to the pool now, as the request's end would anyway


def switch_back_on_checkout(sender: Any, connection: BaseDatabaseWrapper, **kwargs: Any) -> None:
    """`connection_created` receiver: Django sends it whenever it takes a connection (with a pool:
    a checkout, on every request). A connection an earlier request left switched goes back to the
    system context before anything else runs on it."""
    raw = connection.connection
    if not getattr(raw, _DIRTY, False):
        return
    if getattr(connection, _ENTERING, False):
        setattr(connection, _SKIPPED, True)  # `enter_tenant` overwrites both settings next
        return
    with connection.cursor() as cursor:
        cursor.execute(_SWITCH_BACK)
    setattr(raw, _DIRTY, False)


def current_tenant() -> str | None:
    return getattr(connection, _MARK, None)


@contextmanager
def tenant_transaction(tenant_id: UUID | str) -> Iterator[None]:
    """A transaction in which the tenant context holds (`SET LOCAL`): for code outside a request
    that acts for one tenant. The switch ends with the transaction; nested in an outer one (a
    savepoint, whose release keeps local settings) the previous context is put back."""
    if not enabled():
        with transaction.atomic():
            yield
        return
    nested = connection.in_atomic_block
    with transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT current_setting('role'), current_setting('app.tenant_id', true), "
                "current_setting('app.team_ids', true)"
            )
            previous_role, previous_tenant, previous_teams = cursor.fetchone()
            cursor.execute(
                "SELECT set_config('app.tenant_id', %s, true), set_config('app.team_ids', %s, true)",
                [str(tenant_id), ALL_TEAMS],
            )
            if role_name():
                _set_role(cursor, f"SET LOCAL ROLE {role_name()}", [])
        yield
        if nested:
            with connection.cursor() as cursor:
                cursor.execute(
                    "SELECT set_config('role', %s, true), set_config('app.tenant_id', %s, true), "
                    "set_config('app.team_ids', %s, true)",
                    [previous_role, previous_tenant or "", previous_teams or ""],
                )


@contextmanager
def tenant_session(tenant_id: UUID | str) -> Iterator[None]:
    """The tenant context, session-level like a request's, for code outside a request that acts for
    one tenant across several transactions (a Celery task that calls an outside system between
    them, a WebSocket consumer). The context it found (system, or a tenant) comes back at the end."""
    previous, previous_teams = current_tenant(), getattr(connection, _TEAMS, "")
    if previous is not None and previous == str(tenant_id):
        yield
        return
    enter_tenant(tenant_id, ALL_TEAMS)
    try:
        yield
    finally:
        if previous is None:
            leave_tenant()
        else:
            enter_tenant(previous, previous_teams)


@contextmanager
def system_transaction() -> Iterator[None]:
    """A transaction in the system context, whatever context the connection is in: for the few
    checks that must see every tenant's rows, such as whether any document still refers to bytes
    shared across tenants. The caller's context comes back when it ends."""
    if not enabled():
        with transaction.atomic():
            yield
        return
    with transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute("SELECT current_setting('role'), current_setting('app.tenant_id', true)")
            previous_role, previous_tenant = cursor.fetchone()
            cursor.execute("SET LOCAL ROLE NONE")
        yield
        with connection.cursor() as cursor:  # a savepoint's release would keep the local switch
            cursor.execute(
                "SELECT set_config('role', %s, true), set_config('app.tenant_id', %s, true)",
                [previous_role, previous_tenant or ""],
            )


def _set_role(cursor: Any, statement: str, params: list[str]) -> None:
    # A missing role is invalid_parameter_value (a DataError), one not granted a ProgrammingError:
    # either way the request stops with a 503 instead of running unconfined.
    try:
        cursor.execute(statement, params or None)
    except (DataError, ProgrammingError) as exc:
        raise errors.NotConfigured(
            f"The database role {role_name()} for tenant isolation is missing or not granted "
            "(see docs/configuration.md, CASE_TENANT_DB_ROLE)."
        ) from exc


# --- Set-up, run after every migrate (new tables are covered the next time migrate runs) ------


def tenant_tables(conn: BaseDatabaseWrapper) -> list[str]:
    """Tables of the public schema with a `tenant_id` column, plus the tenant table."""
    with conn.cursor() as cursor:
        cursor.execute(
            "SELECT c.table_name FROM information_schema.columns c "
            "JOIN information_schema.tables t USING (table_schema, table_name) "
            "WHERE c.table_schema = 'public' AND c.column_name = 'tenant_id' AND t.table_type = 'BASE TABLE' "
            "ORDER BY 1"
        )
        names = [row[0] for row in cursor.fetchall()]
    return ["tenancy_tenant", *names]


ROLE_SQL = """
DO $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = '{role}') THEN
    IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = current_user AND (rolsuper OR rolcreaterole)) THEN
      RAISE WARNING 'role {role} does not exist and % may not create it; authenticated requests answer 503 until an administrator creates it', current_user;
      RETURN;
    END IF;
    BEGIN
      CREATE ROLE {role} NOLOGIN NOSUPERUSER NOBYPASSRLS;
    EXCEPTION WHEN duplicate_object THEN
      NULL;  -- another database of this cluster created it at the same moment
    END;
  END IF;
  GRANT USAGE ON SCHEMA public TO {role};
  GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO {role};
  GRANT USAGE, SELECT, UPDATE ON ALL SEQUENCES IN SCHEMA public TO {role};
  -- SET ROLE needs the session's user to be a member (superusers always may).
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


def install(conn: BaseDatabaseWrapper) -> None:
    """Enables row-level security and the policy on every tenant table lacking them, and grants
    the tenant role. Idempotent; cheap when nothing is missing."""
    if not enabled(conn):
        return
    tables = tenant_tables(conn)
    with conn.cursor() as cursor:
        cursor.execute(
            "SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
            "WHERE n.nspname = 'public' AND c.relname = ANY(%s) AND c.relrowsecurity "
            "AND EXISTS (SELECT 1 FROM pg_policy p WHERE p.polrelid = c.oid AND p.polname = %s)",
            [tables, POLICY],
        )
        done = {row[0] for row in cursor.fetchall()}
        for table in tables:
            if table in done:
                continue
            column = "id" if table == "tenancy_tenant" else "tenant_id"
            cursor.execute(f'ALTER TABLE "{table}" ENABLE ROW LEVEL SECURITY')
            cursor.execute(f'DROP POLICY IF EXISTS {POLICY} ON "{table}"')
            cursor.execute(
                f'CREATE POLICY {POLICY} ON "{table}" USING ({column} = {_TENANT}) WITH CHECK ({column} = {_TENANT})'
            )
        if role_name() and not role_ready(cursor):
            cursor.execute(ROLE_SQL.replace("{role}", role_name()))
        cursor.execute(LEAKPROOF_SQL)


# Under a policy, PostgreSQL applies a query's own conditions before the policy's only when their
# functions are LEAKPROOF; the text-search match (`@@`, ts_match_vq) is not marked so, and a search
# then filters every row of the tenant instead of using the GIN index (1 ms became 0.7 s on a
# million cases). The match raises no error that depends on the data, so it is declared leakproof;
# that takes a superuser, and without one the warning says what an administrator should run.
LEAKPROOF_SQL = """
DO $$
BEGIN
  IF EXISTS (SELECT 1 FROM pg_proc WHERE proname = 'ts_match_vq' AND NOT proleakproof) THEN
    IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = current_user AND rolsuper) THEN
      ALTER FUNCTION ts_match_vq(tsvector, tsquery) LEAKPROOF;
    ELSE
      RAISE WARNING 'case search is slow under row-level security until a superuser runs: ALTER FUNCTION ts_match_vq(tsvector, tsquery) LEAKPROOF';
    END IF;
  END IF;
END
$$;
"""


def role_ready(cursor: Any) -> bool:
    """The role exists, the service's user may switch to it and it may use every table."""
    cursor.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", [role_name()])
    if cursor.fetchone() is None:
        return False
    cursor.execute(
        "SELECT pg_has_role(current_user, %s, 'MEMBER') AND NOT EXISTS ("
        "  SELECT 1 FROM pg_tables WHERE schemaname = 'public' AND NOT has_table_privilege("
        "    %s, format('%%I.%%I', schemaname, tablename), 'SELECT,INSERT,UPDATE,DELETE'))",
        [role_name(), role_name()],
    )
    return bool(cursor.fetchone()[0])


# --- team access: a restrictive policy next to the tenant one (created by the apps' migrations) ---

TEAM_POLICY = "team_access"
_TEAM_IDS = "string_to_array(NULLIF(current_setting('app.team_ids', true), ''), ',')"
# A case row: open (no access teams), or the caller holds every team, or shares one of them.
CASE_TEAM_ACCESS = (
    f"access_teams = '' OR current_setting('app.team_ids', true) = '{ALL_TEAMS}' "
    f"OR string_to_array(access_teams, ',') && {_TEAM_IDS}"
)
# A row of a case's (a step, a comment): visible when its case is (the case table's policies apply
# inside this subquery too).
OF_VISIBLE_CASE = "EXISTS (SELECT 1 FROM cases_case c WHERE c.id = case_id)"


def team_policy_migration(table: str, using: str) -> Any:
    """A migration operation adding the restrictive `team_access` read policy to `table`
    (PostgreSQL only). Restrictive: it narrows what the tenant policy lets through, for SELECT and
    for the rows UPDATE and DELETE find; inserts are checked by the services."""
    from django.db import migrations

    def forwards(apps: Any, schema_editor: Any) -> None:
        if schema_editor.connection.vendor != "postgresql":
            return
        schema_editor.execute(f'DROP POLICY IF EXISTS {TEAM_POLICY} ON "{table}"')
        schema_editor.execute(
            f'CREATE POLICY {TEAM_POLICY} ON "{table}" AS RESTRICTIVE FOR SELECT USING ({using})'
        )

    def backwards(apps: Any, schema_editor: Any) -> None:
        if schema_editor.connection.vendor == "postgresql":
            schema_editor.execute(f'DROP POLICY IF EXISTS {TEAM_POLICY} ON "{table}"')

    return migrations.RunPython(forwards, backwards)
