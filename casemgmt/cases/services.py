"""Writes for case types and cases. Each service owns its transaction and appends its audit row in it.

Lock order: the case-type key's counter row (and the tenant's prefix name lock) before the case
row, the case row before its step rows, and the tenant's audit chain lock last: the audit append
comes after every row change a service makes to rows others may hold (closing halts the workflow
first). After it only rows this transaction made or reaches through the case row it holds (a
case's pending steps) may change. Row locks are FOR NO KEY UPDATE, so the foreign-key checks of
concurrent inserts (FOR KEY SHARE on the case, its steps, the tenant) never wait for them. The whole
order is in the tenancy services' docstring.
"""

from __future__ import annotations

import re
from datetime import timedelta
from functools import lru_cache
from typing import TYPE_CHECKING, Any, NamedTuple
from uuid import UUID

from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, connection, connections, transaction
from django.db.models import Field, Max
from django.utils import timezone
from jsonschema import Draft7Validator

from casemgmt.accounts.models import Team
from casemgmt.audit.services import record, record_deferred
from casemgmt.cases import hooks
from casemgmt.cases.jsondata import (
    SEARCH_TEXT_LIMIT,
    check_schema,
    data_changes,
    data_text,
    draft7_validator,
    merge_patch,
    schema_errors,
    search_text,
    validate_data,
)
from casemgmt.cases.models import Case, CaseCounter, CaseType
from casemgmt.cases.selectors import access_case
from casemgmt.realtime.events import broadcast_on_commit
from casemgmt.tenancy import rls
from casemgmt.tenancy.models import Tenant
from casemgmt.tenancy.selectors import default_sla_hours
from shared.api.bulk import bulk_run, check_count
from shared.api.errors import InvalidState, PermissionDenied, ValidationFailed, VersionConflict
from shared.api.time import now_ms
from shared.audit.hashing import canonical_value
from shared.audit.services import DeferredAppend
from shared.locks import lock_name
from shared.prepared import prepared_cursor

if TYPE_CHECKING:
    from casemgmt.accounts.models import User

KEY_RE = re.compile(r"^[a-z][a-z0-9_]{1,99}$")
PREFIX_RE = re.compile(r"^[A-Z0-9]{2,8}$")


def default_prefix(key: str) -> str:
    """Initials of the snake_case words when two or more, else the first three letters."""
    words = [w for w in key.split("_") if w]
    prefix = "".join(w[0] for w in words) if len(words) >= 2 else key.replace("_", "")[:3]
    return prefix.upper()[:8].ljust(2, "X")


def _lock_counter(tenant_id: Any, key: str) -> CaseCounter:
    """The per-(tenant, key) counter row, created if missing and locked until the transaction ends.
    It serializes both case-type versioning and case numbering for that key."""
    CaseCounter.objects.bulk_create([CaseCounter(tenant_id=tenant_id, key=key)], ignore_conflicts=True)
    return CaseCounter.objects.select_for_update().get(tenant_id=tenant_id, key=key)


@transaction.atomic
def case_type_create(
    *,
    user: User,
    key: str,
    display_name: str,
    schema: dict[str, Any],
    description: str = "",
    prefix: str | None = None,
    sla_hours: int | None = None,
    access_teams: list[Any] | None = None,
) -> CaseType:
    if not KEY_RE.match(key):
        raise ValidationFailed("key must be snake_case: a-z, 0-9 and _, starting with a letter", field="key")
    if prefix is not None and not PREFIX_RE.match(prefix):
        raise ValidationFailed("prefix must be 2 to 8 characters of A-Z and 0-9", field="prefix")
    check_schema(schema)
    _lock_counter(user.member_tenant_id, key)
    existing = CaseType.objects.filter(tenant_id=user.member_tenant_id, key=key)
    latest = existing.aggregate(v=Max("version"))["v"] or 0
    if latest:
        # An existing key registers the next version; numbering continues, so the prefix stays.
        current_prefix = existing.get(version=latest).prefix
        if prefix is not None and prefix != current_prefix:
            raise ValidationFailed(
                f"prefix of case type '{key}' is {current_prefix} and cannot change", field="prefix"
            )
        prefix = current_prefix
    else:
        prefix = _free_prefix(user.member_tenant_id, key, prefix)
    case_type = CaseType.objects.create(
        tenant_id=user.member_tenant_id,
        key=key,
        version=latest + 1,
        display_name=display_name,
        description=description,
        schema=schema,
        prefix=prefix or default_prefix(key),
        sla_hours=sla_hours,
        created_by=user,
    )
    _set_access_teams(case_type, access_teams)
    record(
        tenant_id=user.member_tenant_id,
        actor=str(user.id),
        action="case_type:registered",
        resource=f"case-types/{case_type.id}",
        changes={
            "key": key,
            "version": case_type.version,
            "prefix": case_type.prefix,
            "accessTeams": case_type.access_teams,
        },
    )
    return case_type


def _set_access_teams(case_type: CaseType, access_teams: list[Any] | None) -> None:
    """`accessTeams` belongs to the key: given, it becomes every version's and every case's of the
    key (one UPDATE each, in this transaction); omitted, the new version keeps the previous one's."""
    tenant_id = case_type.tenant_id
    if access_teams is None:
        previous = (
            CaseType.objects.filter(tenant_id=tenant_id, key=case_type.key)
            .exclude(pk=case_type.pk)
            .order_by("-version")
            .first()
        )
        case_type.access_teams = previous.access_teams if previous else []
        case_type.save(update_fields=["access_teams"])
        return
    ids = sorted({str(team_id) for team_id in access_teams})
    known = {
        str(t) for t in Team.objects.filter(tenant_id=tenant_id, pk__in=ids).values_list("pk", flat=True)
    }
    if unknown := [team_id for team_id in ids if team_id not in known]:
        raise ValidationFailed(f"accessTeams: no team {unknown[0]} in this tenant", field="accessTeams")
    CaseType.objects.filter(tenant_id=tenant_id, key=case_type.key).update(access_teams=ids)
    with rls.system_transaction():  # every case of the key, also those the caller cannot see
        Case.objects.filter(tenant_id=tenant_id, case_type__key=case_type.key).update(
            access_teams=",".join(ids)
        )
    case_type.access_teams = ids


def may_see_case_type(user: User, case_type: CaseType) -> bool:
    """A caller outside a case type's access teams (and without admin:*) sees none of its cases."""
    if not case_type.access_teams:  # the common case asks the database nothing
        return True
    teams = user.rls_teams
    if teams == "*":
        return True
    return bool(set(case_type.access_teams) & set(teams.split(",")))


def _free_prefix(tenant_id: Any, key: str, prefix: str | None) -> str:
    """A new key's case-number prefix, unused by the tenant's other keys: case numbers are unique
    per tenant, and each key numbers from 1. A prefix asked for and taken is a 400; a default one
    that is taken gets the first free digit suffix (CA, CA2, CA3, ...)."""
    lock_name(f"case-prefix:{tenant_id}")  # two new keys cannot take one prefix at once
    taken = set(
        CaseType.objects.filter(tenant_id=tenant_id).exclude(key=key).values_list("prefix", flat=True)
    )
    if prefix is not None:
        if prefix in taken:
            raise ValidationFailed(f"prefix {prefix} is used by another case type", field="prefix")
        return prefix
    base = default_prefix(key)
    candidates = [base] + [f"{base[:7]}{n}" if n < 10 else f"{base[:6]}{n}" for n in range(2, 100)]
    return next(c for c in candidates if c not in taken)


NEXT_NUMBER_SQL = (
    f"UPDATE {CaseCounter._meta.db_table} SET last_number = last_number + 1"  # noqa: S608 - the model table name; values are placeholders
    " WHERE tenant_id = %s AND key = %s RETURNING last_number"
)


def _next_case_number(tenant_id: Any, case_type: CaseType) -> str:
    # The UPDATE takes the row lock: concurrent creators queue here until this transaction ends,
    # so numbers are gap-free (a rollback also rolls the counter back) and never duplicated.
    # (SQLite has one writer at a time, so the same holds there.)
    with connection.cursor() as cursor:
        tenant_param = CaseCounter._meta.get_field("tenant").get_db_prep_value(tenant_id, connection)
        cursor.execute(NEXT_NUMBER_SQL, [tenant_param, case_type.key])
        row = cursor.fetchone()
    if row is None:  # a counter row is made with the case type; this covers rows loaded otherwise
        _lock_counter(tenant_id, case_type.key)
        return _next_case_number(tenant_id, case_type)
    return _case_number(case_type, row[0])


def _case_number(case_type: CaseType, number: int) -> str:
    return f"{case_type.prefix}-{number:06d}"


def _given_display_name(data: dict[str, Any]) -> str | None:
    """The name a case takes from its data, if any; else it is named after its type and number."""
    for field in ("title", "name", "subject"):
        if isinstance(data.get(field), str) and data[field].strip():
            return data[field].strip()[:300]
    return None


def _number_case(case: Case, case_type: CaseType, number: str, given_name: str | None) -> None:
    """The fields of `case` that follow from its number (the SQL in `_insert_numbered_sql` does the
    same on PostgreSQL; a test holds the two to one result)."""
    case.case_number = number
    case.display_name = given_name or f"{case_type.display_name} {number}"[:300]
    case.search_text = search_text(case_number=number, display_name=case.display_name, data=case.data)


# Validators of case types' schemas, by case type id: a registered schema never changes, and
# building a validator costs more than most validations.
_validators: dict[UUID, Draft7Validator] = {}


def _validator(case_type: CaseType) -> Draft7Validator:
    validator = _validators.get(case_type.id)
    if validator is None:
        if len(_validators) >= 1024:
            _validators.clear()
        validator = _validators[case_type.id] = draft7_validator(case_type.schema)
    return validator


class _CreateContext(NamedTuple):
    """What a create reads besides the case type: the SLA hours when neither the case type nor the
    workflow sets them, and the apps' `CreateRead`s by name (the workflow it binds, the stored webhook
    configuration). Read before the number is taken, so under no lock."""

    default_sla_hours: int
    reads: dict[str, Any]


# PostgreSQL: one statement reads `_CreateContext`, the apps' reads as scalar subqueries.
@lru_cache(maxsize=8)
def _create_context_sql(reads: tuple[str, ...]) -> str:
    columns = "".join(f",\n  {sql}" for sql in reads)
    return f"""
SELECT
  (SELECT t.default_sla_hours FROM {Tenant._meta.db_table} t WHERE t.id = %(tenant)s){columns}
"""  # noqa: S608 - table names and the apps' subqueries; values are placeholders


def _create_context(tenant_id: UUID, case_type: CaseType, workflow_version_id: Any) -> _CreateContext:
    if connection.vendor != "postgresql":  # SQLite (embedded): the same reads, one at a time
        reads = {r.name: r.read(tenant_id, case_type, workflow_version_id) for r in hooks.CREATE_READS}
        return _CreateContext(default_sla_hours=default_sla_hours(tenant_id=tenant_id), reads=reads)
    with prepared_cursor() as cursor:
        cursor.execute(
            _create_context_sql(tuple(r.sql for r in hooks.CREATE_READS)),
            {"tenant": tenant_id, "key": case_type.key, "workflow": workflow_version_id},
        )
        tenant_sla_hours, *values = cursor.fetchone()
    return _CreateContext(
        default_sla_hours=tenant_sla_hours or settings.CASE_DEFAULT_SLA_HOURS,
        # A read may refuse the create (a workflow asked for that is not published), before any lock.
        reads={
            r.name: r.decode(value, workflow_version_id)
            for r, value in zip(hooks.CREATE_READS, values, strict=True)
        },
    )


# The case row's columns that follow from its number; every other column is a parameter.
_NUMBER_SQL = "number.n"
_NAMED_SQL = "left(%(type_name)s::text || ' ' || number.n, 300)"


@lru_cache(maxsize=2)
def _insert_numbered_template(named: bool) -> tuple[str, tuple[Field, ...]]:
    """`_insert_numbered_sql`'s statement, the same for every create of a kind (with a given name or
    not), and the fields whose values are its parameters: built once, not per create (quoting and
    casting every column cost a create a fifth of its CPU)."""
    name_sql = "%(given_name)s::text" if named else _NAMED_SQL
    numbered = {
        "case_number": _NUMBER_SQL,
        "display_name": name_sql,
        # search_text(): number, number with a space, name, the data's text values; empty parts skipped.
        "search_text": f"left(concat_ws(E'\\n', number.n, replace(number.n, '-', ' '), NULLIF({name_sql}, ''),"
        f" NULLIF(%(data_text)s::text, '')), {SEARCH_TEXT_LIMIT})",
    }
    columns, values, parameters = [], [], []
    for field in Case._meta.concrete_fields:
        columns.append(connection.ops.quote_name(field.column))
        if field.attname in numbered:
            values.append(numbered[field.attname])
            continue
        parameters.append(field)
        cast_type = field.cast_db_type(connection)  # type: ignore[attr-defined]  # Field has it; the stubs lack it
        values.append(f"%(case_{field.attname})s::{cast_type}")
    sql = f"INSERT INTO {Case._meta.db_table} ({', '.join(columns)}) SELECT {', '.join(values)} FROM number"  # noqa: S608 - column names from the model; values are placeholders
    return sql, tuple(parameters)


def _insert_numbered_sql(case: Case, given_name: str | None) -> tuple[str, dict[str, Any]]:
    """`INSERT INTO cases (...) SELECT ... FROM number`: the case row with the number the `number`
    CTE took, its default name and its search text built in SQL exactly as `_number_case` does."""
    sql, fields = _insert_numbered_template(bool(given_name))
    params: dict[str, Any] = {"given_name": given_name, "data_text": data_text(case.data)}
    db = connections[case._state.db or DEFAULT_DB_ALIAS]
    for field in fields:
        params[f"case_{field.attname}"] = field.get_db_prep_save(field.pre_save(case, True), db)
    return sql, params


def _insert_numbered(case: Case, case_type: CaseType, given_name: str | None, append: DeferredAppend) -> None:
    """PostgreSQL: takes the number, inserts the case and appends its audit row in one statement, the
    create's last before COMMIT. The counter's row lock (numbers gap-free: a rollback gives the
    number back) and the tenant's chain lock are then held for this one round trip and the commit,
    instead of from the first statement of the create to its end."""
    insert_sql, params = _insert_numbered_sql(case, given_name)
    call, audit_params = append.call("new_case.case_number")
    sql = f"""
WITH number AS (
  UPDATE {CaseCounter._meta.db_table} SET last_number = last_number + 1
  WHERE tenant_id = %(tenant)s AND key = %(key)s
  RETURNING %(prefix)s::text || '-' || lpad(last_number::text, greatest(6, length(last_number::text)), '0') AS n
), new_case AS ({insert_sql} RETURNING case_number)
SELECT new_case.case_number, appended.* FROM new_case CROSS JOIN LATERAL {call} AS appended
"""  # noqa: S608 - table names from the models; values are placeholders
    params.update(audit_params, tenant=case.tenant_id, key=case_type.key, prefix=case_type.prefix)
    params["type_name"] = case_type.display_name
    with prepared_cursor() as cursor:
        cursor.execute(sql, params)
        row = cursor.fetchone()
    if row is None:  # no counter row (see `_next_case_number`): make it, then take the number
        _lock_counter(case.tenant_id, case_type.key)
        _insert_numbered(case, case_type, given_name, append)
        return
    _number_case(case, case_type, row[0], given_name)
    append.finish(row[0], tuple(row[1:]))
    case._state.adding, case._state.db = False, connection.alias


@transaction.atomic
def case_create(
    *,
    user: User,
    case_type: CaseType,
    data: dict[str, Any],
    workflow_version_id: Any = None,
    display_name: str | None = None,
) -> Case:
    tenant_id = user.member_tenant_id
    if case_type.access_teams and not may_see_case_type(user, case_type):  # could not read its own case
        raise PermissionDenied("Only members of the case type's access teams may create its cases.")
    data = canonical_value(data)  # stored, returned and audited in the one form jsonb keeps
    errors = schema_errors(case_type.schema, data, validator=_validator(case_type))
    if errors:  # 400 listing every schema failure; a bad workflowVersionId is reported first
        hooks.workflows().resolve(
            tenant_id=tenant_id, case_type=case_type, workflow_version_id=workflow_version_id
        )
        raise ValidationFailed.from_errors(errors)
    binding = hooks.workflows()
    # Everything is read and prepared before the number is taken: the number is the last thing a
    # create does (on PostgreSQL in the statement that inserts the case and appends its audit row).
    context = _create_context(tenant_id, case_type, workflow_version_id)
    workflow = context.reads[binding.create_read.name]
    given_name = display_name or _given_display_name(data)
    created_at = timezone.now()
    # Every case gets a deadline: the case type's slaHours win, else the bound workflow's, else the
    # tenant's default (itself falling back to the service's).
    sla_hours = case_type.sla_hours or (workflow.sla_hours if workflow else None) or context.default_sla_hours
    case = Case(
        tenant_id=tenant_id,
        case_type=case_type,
        data=data,
        workflow_version=workflow,
        created_at=created_at,
        created_by=user,
        sla_deadline=created_at + timedelta(hours=sla_hours),
        access_teams=",".join(case_type.access_teams),
    )
    changes = {
        "caseNumber": None,  # the number, filled in where it is taken
        "caseTypeId": str(case_type.id),
        "workflowVersionId": str(workflow.id) if workflow else None,
        "status": Case.ACTIVE,
        "version": 1,
    }
    audit = {"actor": str(user.id), "action": "case:created", "resource": f"cases/{case.id}"}
    if connection.vendor == "postgresql":
        _insert_numbered(
            case,
            case_type,
            given_name,
            record_deferred(tenant_id=tenant_id, **audit, changes=changes, key="caseNumber"),
        )
    else:  # SQLite: one writer at a time, so the order of these statements holds no one up
        _number_case(case, case_type, _next_case_number(tenant_id, case_type), given_name)
        case.save(force_insert=True)
        record(tenant_id=tenant_id, **audit, changes={**changes, "caseNumber": case.case_number})
    # The workflow's steps and the webhooks follow the audit row, as before: rows this create made.
    if workflow is not None:
        binding.start(case=case, actor=user)
    hooks.case_event(case=case, event="case:created", reads=context.reads)
    return case


def _locked(case: Case) -> Case:
    return (
        Case.objects.select_for_update(of=("self",), no_key=True).select_related("case_type").get(pk=case.pk)
    )


def _announce(case: Case, user: User, **extra: Any) -> None:
    """WebSocket `case:updated` after commit: {caseId, version, changedBy[, status]}."""
    broadcast_on_commit(
        tenant_id=case.tenant_id,
        type="case:updated",
        data={"caseId": str(case.id), "version": case.version, "changedBy": str(user.id), **extra},
        permission="cases:read",
    )


@transaction.atomic
def case_update_data(*, user: User, case: Case, patch: dict[str, Any], expected_version: int | None) -> Case:
    # Stored data is already in the form jsonb keeps; a patch in that form keeps the merge in it, so
    # what the response shows, what the audit row hashes and what later reads return are one value.
    patch = canonical_value(patch)
    # The row lock makes check-and-update atomic: of N writers holding version V, the first wins and
    # the others find V+1 once they get the lock.
    case = _locked(case)
    if expected_version is not None and case.version != expected_version:
        raise VersionConflict(
            f"Case is at version {case.version}, not {expected_version}.",
            extra={"currentVersion": case.version},
        )
    if case.status != Case.ACTIVE:
        raise InvalidState(f"Case is {case.status}; its data can no longer change.")
    merged = merge_patch(case.data, patch)
    validate_data(case.case_type.schema, merged, validator=_validator(case.case_type))  # merged must validate
    changes = data_changes(case.data, merged)
    if not changes["after"]:
        return case  # nothing changed: no new version, no audit row
    case.data = merged
    case.version += 1
    case.search_text = search_text(case_number=case.case_number, display_name=case.display_name, data=merged)
    case.save(update_fields=["data", "version", "search_text", "updated_at"])
    record(
        tenant_id=case.tenant_id,
        actor=str(user.id),
        action="case:updated",
        resource=f"cases/{case.id}",
        changes={**changes, "version": case.version},
    )
    hooks.case_event(case=case, event="case:updated")
    _announce(case, user)
    return case


def allowed_outcomes(case: Case) -> list[str] | None:
    if case.workflow_version is None:
        return None
    outcomes = (case.workflow_version.definition or {}).get("outcomes")
    return [str(o) for o in outcomes] if isinstance(outcomes, list) and outcomes else None


def _finish(*, user: User, case: Case, status: str, action: str, reason: str, outcome: str = "") -> Case:
    case = _locked(case)
    if case.status != Case.ACTIVE:
        raise InvalidState(f"Case is {case.status}, not active.")  # 409 when not active
    case.status = status
    case.status_reason = reason
    case.outcome = outcome
    case.closed_at = now_ms()
    case.save(update_fields=["status", "status_reason", "outcome", "closed_at", "updated_at"])
    # Steps before the audit append: an SLA escalation or a user's release locks a step row, then
    # appends; halting after our append would wait for that row while holding the chain it wants.
    hooks.workflows().halt(case=case, actor=user)
    record(
        tenant_id=case.tenant_id,
        actor=str(user.id),
        action=action,
        resource=f"cases/{case.id}",
        changes={
            "status": {"before": Case.ACTIVE, "after": status},
            "reason": reason,
            "outcome": outcome or None,
        },
    )
    hooks.case_event(case=case, event=action)
    _announce(case, user, status=status)
    return case


@transaction.atomic
def case_close(*, user: User, case: Case, reason: str = "", outcome: str = "") -> Case:
    outcomes = allowed_outcomes(case)
    # The outcome is free text unless the workflow defines `outcomes`.
    if outcomes is not None and outcome not in outcomes:
        raise ValidationFailed(f"outcome must be one of: {', '.join(outcomes)}", field="outcome")
    return _finish(
        user=user, case=case, status=Case.CLOSED, action="case:closed", reason=reason, outcome=outcome
    )


@transaction.atomic
def case_cancel(*, user: User, case: Case, reason: str = "") -> Case:
    return _finish(user=user, case=case, status=Case.CANCELLED, action="case:cancelled", reason=reason)


CASE_BULK_ACTIONS = ("close", "cancel")


def cases_bulk(
    *, user: User, action: str, case_ids: list[Any], outcome: str = "", reason: str = ""
) -> dict[str, Any]:
    """`POST /cases/bulk`: each case read and closed or cancelled as its own request would be
    (404 outside the caller's tenant, its own transaction, audit and messages)."""
    check_count(len(case_ids), "caseIds")

    def act(case_id: Any) -> None:
        case = access_case(user=user, case_id=case_id)
        if action == "close":
            case_close(user=user, case=case, reason=reason, outcome=outcome)
        else:
            case_cancel(user=user, case=case, reason=reason)

    return bulk_run(case_ids, act, lambda case_id: {"caseId": str(case_id)})
