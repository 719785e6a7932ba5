"""Append, verify, erase and export for any concrete AuditEventBase model.

Appends are serialized per chain so that concurrent writers never fork it: on PostgreSQL with a
transaction-scoped advisory lock keyed by the chain; on SQLite by the database's single writer (the
settings begin every transaction IMMEDIATE, so the read of the chain's last entry already holds
the write lock). The caller's transaction holds the lock, so the audit row commits or rolls back
together with the change it records. A model naming an `APPEND_FUNCTION` (PostgreSQL) does the lock,
the head read and the insert in one statement (`append_function_sql`). The append-only trigger is PostgreSQL's alone: on SQLite (the
embedded development default) verification is what catches a changed row.
"""

from __future__ import annotations

import csv
import io
import json
import uuid
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, NamedTuple

from django.db import connection, transaction
from django.db.models import QuerySet

from shared.api.time import iso, now_ms
from shared.audit.hashing import canonical_json, canonical_value, compute_hash, entry_of
from shared.audit.models import ERASED_HASH, GENESIS_HASH, AuditEventBase
from shared.locks import lock_name

ERASURE_SETTING = "audit.allow_erasure"
DELETION_MARK_SETTING = "audit.allow_deletion_mark"


def _lock_chain(model: type[AuditEventBase], chain: str) -> None:
    lock_name(f"{model._meta.db_table}:{chain}")


def audit_append(
    *,
    model: type[AuditEventBase],
    chain: str,
    actor: str,
    action: str,
    resource: str,
    changes: dict[str, Any] | None = None,
    **extra: Any,
) -> AuditEventBase:
    event = model(
        id=uuid.uuid4(),
        chain=chain,
        actor=actor,
        action=action,
        resource=resource,
        # Hashed in the form the database will hand back, so the stored event verifies.
        changes=canonical_value(changes or {}),
        **extra,
    )
    if model.APPEND_FUNCTION and connection.vendor == "postgresql":
        _append_in_sql(event)
        return event
    with transaction.atomic():
        _lock_chain(model, chain)
        last = model.objects.filter(chain=chain).order_by("-sequence").only("sequence", "hash").first()
        event.sequence = (last.sequence + 1) if last else 1
        event.previous_hash = last.hash if last else GENESIS_HASH
        event.timestamp = now_ms()  # taken under the lock: timestamps follow the chain's order
        event.hash = compute_hash(event.previous_hash, entry_of(event))
        event.save(force_insert=True)
        return event


# The canonical entry's keys sort with "timestamp" last, so the entry without its timestamp value
# ends like this; the append function writes the timestamp (taken under the lock) and closes it.
_OPEN_TIMESTAMP = '"timestamp":""}'


def _append_in_sql(event: AuditEventBase) -> None:
    """One statement: the table's append function (`append_function_sql`) takes the chain lock,
    reads the head and inserts the event, in the caller's transaction (a statement of its own when
    there is none). The hash it stored is recomputed here with `compute_hash` and must match, so the
    two definitions cannot drift apart unnoticed."""
    model = type(event)
    entry = canonical_json({**entry_of(event), "timestamp": ""})  # the event has no timestamp yet
    if not entry.endswith(_OPEN_TIMESTAMP):
        raise RuntimeError("the canonical audit entry no longer ends with its timestamp")
    extra = [getattr(event, column) for column in model.APPEND_EXTRA_COLUMNS]
    placeholders = ", ".join(["%s"] * (7 + len(extra)))
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT * FROM {model.APPEND_FUNCTION}({placeholders})",  # noqa: S608 - a function name from the model; values are placeholders
            [event.id, event.chain, event.actor, event.action, event.resource, json.dumps(event.changes),
             entry[: -len('"}')], *extra],
        )  # fmt: skip
        event.sequence, event.timestamp, event.previous_hash, event.hash = cursor.fetchone()
    if event.hash != compute_hash(event.previous_hash, entry_of(event)):
        raise RuntimeError(f"{model.APPEND_FUNCTION} hashed event {event.id} differently from compute_hash")
    event._state.adding, event._state.db = False, connection.alias  # stored, as save() would leave it


class DeferredAppend:
    """An append whose one changes value (`key`) only the caller's SQL knows: a value taken under a
    lock in the same statement as the append (a case number). `call(value_sql)` is the append
    function's call for that statement, with the value spliced into the stored changes and into the
    hashed entry; `finish` takes the function's output row and checks the hash as `_append_in_sql`.

    The value stands in the entry as a random token until the database replaces it, so it must be
    text JSON writes unescaped (letters, digits, '-'); `finish` raises if the hashes disagree."""

    def __init__(self, event: AuditEventBase, key: str) -> None:
        self.event, self.key, self.token = event, key, f"deferred-{uuid.uuid4().hex}"
        event.changes = {**event.changes, key: self.token}
        self.entry = canonical_json({**entry_of(event), "timestamp": ""})
        if not self.entry.endswith(_OPEN_TIMESTAMP) or self.entry.count(self.token) != 1:
            raise RuntimeError("the deferred audit entry has no single place for its value")

    def call(self, value_sql: str) -> tuple[str, dict[str, Any]]:
        """The call (for `FROM` / `LATERAL`) and its named parameters (prefixed `audit_`)."""
        model, event = type(self.event), self.event
        params: dict[str, Any] = {
            "audit_id": event.id, "audit_chain": event.chain, "audit_actor": event.actor,
            "audit_action": event.action, "audit_resource": event.resource,
            "audit_changes": json.dumps(event.changes), "audit_key": self.key,
            "audit_entry": self.entry[: -len('"}')], "audit_token": self.token,
        }  # fmt: skip
        extra = ""
        for column in model.APPEND_EXTRA_COLUMNS:
            params[f"audit_x_{column}"] = getattr(event, column)
            extra += f", %(audit_x_{column})s"
        call = (
            f"{model.APPEND_FUNCTION}(%(audit_id)s, %(audit_chain)s, %(audit_actor)s, %(audit_action)s,"
            f" %(audit_resource)s,"
            f" jsonb_set(%(audit_changes)s::jsonb, ARRAY[%(audit_key)s::text], to_jsonb(({value_sql})::text)),"
            f" replace(%(audit_entry)s, %(audit_token)s, ({value_sql})::text){extra})"
        )
        return call, params

    def finish(self, value: str, row: tuple[Any, ...]) -> AuditEventBase:
        """`row`: the function's (sequence, timestamp, previous hash, hash); `value` what it spliced."""
        event = self.event
        event.changes = {**event.changes, self.key: value}
        event.sequence, event.timestamp, event.previous_hash, event.hash = row
        if event.hash != compute_hash(event.previous_hash, entry_of(event)):
            raise RuntimeError(
                f"{type(event).APPEND_FUNCTION} hashed event {event.id} differently from compute_hash"
            )
        event._state.adding, event._state.db = False, connection.alias
        return event


def audit_append_deferred(
    *,
    model: type[AuditEventBase],
    chain: str,
    actor: str,
    action: str,
    resource: str,
    changes: dict[str, Any],
    key: str,
    **extra: Any,
) -> DeferredAppend:
    """A `DeferredAppend` (PostgreSQL, a model with an `APPEND_FUNCTION`): the caller runs its call."""
    if not model.APPEND_FUNCTION or connection.vendor != "postgresql":
        raise RuntimeError("a deferred audit append needs PostgreSQL and the model's append function")
    event = model(
        id=uuid.uuid4(), chain=chain, actor=actor, action=action, resource=resource,
        changes=canonical_value(changes), **extra,
    )  # fmt: skip
    return DeferredAppend(event, key)


def append_function_sql(table: str, extra_columns: dict[str, str]) -> tuple[str, str]:
    """PostgreSQL function `<table>_append(id, chain, actor, action, resource, changes, entry_head,
    <extra columns>)` returning the sequence, timestamp, previous hash and hash of the event it
    inserted.

    It does in one round trip what the ORM append does in three, with the same guarantees: the
    chain's advisory lock (the key `_lock_chain` uses) first; then the timestamp (database clock,
    milliseconds) and the head, read with a snapshot taken after the lock was granted (a VOLATILE
    function's statements each take a fresh snapshot under READ COMMITTED, so the head the previous
    holder committed is seen); then the insert. `entry_head` is the canonical JSON of the entry up
    to its timestamp's opening quote (see `_append_in_sql`); the hash is 'sha256:' +
    hex(sha256(previous_hash || entry)) over UTF-8, exactly `compute_hash`."""
    function = f"{table}_append"
    params = "".join(f", p_{name} {sql_type}" for name, sql_type in extra_columns.items())
    columns = "".join(f", {name}" for name in extra_columns)
    values = "".join(f", p_{name}" for name in extra_columns)
    forward = f"""
CREATE OR REPLACE FUNCTION {function}(
  p_id uuid, p_chain varchar, p_actor varchar, p_action varchar, p_resource varchar,
  p_changes jsonb, p_entry_head text{params}
) RETURNS TABLE (out_sequence bigint, out_timestamp timestamptz, out_previous_hash varchar, out_hash varchar)
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  head_sequence bigint;
  head_hash varchar;
  stamp timestamptz;
  new_hash varchar;
BEGIN
  PERFORM pg_advisory_xact_lock(hashtextextended('{table}:' || p_chain, 0));
  stamp := date_trunc('milliseconds', clock_timestamp());
  SELECT e.sequence, e.hash INTO head_sequence, head_hash
    FROM {table} e WHERE e.chain = p_chain ORDER BY e.sequence DESC LIMIT 1;
  head_sequence := COALESCE(head_sequence, 0) + 1;
  head_hash := COALESCE(head_hash, '{GENESIS_HASH}');
  new_hash := 'sha256:' || encode(sha256(convert_to(
    head_hash || p_entry_head || to_char(stamp AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') || '"}}',
    'UTF8')), 'hex');
  INSERT INTO {table} (id, chain, sequence, timestamp, actor, action, resource, changes, hash,
                       previous_hash, erased, deleted{columns})
    VALUES (p_id, p_chain, head_sequence, stamp, p_actor, p_action, p_resource, p_changes,
            new_hash, head_hash, false, false{values});
  RETURN QUERY SELECT head_sequence, stamp, head_hash, new_hash;
END;
$$;
"""  # noqa: S608 - DDL over names from code
    backward = f"DROP FUNCTION IF EXISTS {function};"
    return forward, backward


def install_append_function_operation(table: str, extra_columns: dict[str, str]) -> Any:
    """A migration operation that installs `append_function_sql` on PostgreSQL, nothing elsewhere."""
    from django.db import migrations

    forward_sql, backward_sql = append_function_sql(table, extra_columns)

    def forward(apps: Any, schema_editor: Any) -> None:
        if schema_editor.connection.vendor == "postgresql":
            schema_editor.execute(forward_sql, params=None)

    def backward(apps: Any, schema_editor: Any) -> None:
        if schema_editor.connection.vendor == "postgresql":
            schema_editor.execute(backward_sql, params=None)

    return migrations.RunPython(forward, backward)


class ChainEntry(NamedTuple):
    """One stored event as verification reads it: the hashed fields and the links, no model instance
    (building a million of those costs more than hashing them)."""

    id: Any
    sequence: int
    timestamp: datetime
    actor: str
    action: str
    resource: str
    changes: Any
    hash: str
    previous_hash: str
    erased: bool


@dataclass
class VerifyResult:
    is_valid: bool
    entries_checked: int = 0
    redacted_entries: int = 0
    first_entry: AuditEventBase | ChainEntry | None = None
    last_entry: AuditEventBase | ChainEntry | None = None
    first_broken: AuditEventBase | ChainEntry | None = None
    errors: list[str] = field(default_factory=list)
    errors_not_listed: int = 0


def audit_verify(
    events: Iterable[AuditEventBase | ChainEntry], *, expected_previous: str | None = GENESIS_HASH
) -> VerifyResult:
    """Walks events in sequence order. Each must link to the previous hash and hash to itself.

    Erased events keep their place: we cannot recompute their hash, so we accept the stored link into
    the next entry (its previous_hash still names the original hash) and count them as redacted.
    `expected_previous=None` starts the walk mid-chain (trust the first event's previous_hash).
    """
    result = VerifyResult(is_valid=True)
    previous_hash = expected_previous
    previous_sequence: int | None = None
    for event in events:
        result.entries_checked += 1
        result.first_entry = result.first_entry or event
        result.last_entry = event
        if previous_sequence is not None and event.sequence != previous_sequence + 1:
            _break(
                result,
                event,
                f"entry {event.id} (sequence {event.sequence}): gap after sequence {previous_sequence}",
            )
        if previous_hash is not None and event.previous_hash != previous_hash:
            _break(
                result,
                event,
                f"entry {event.id} (sequence {event.sequence}): previousHash does not match the preceding entry",
            )
        if event.erased and event.hash == ERASED_HASH:
            result.redacted_entries += 1
            previous_hash = None  # the next entry's link is all that is left to check against
        else:
            if compute_hash(event.previous_hash, entry_of(event)) != event.hash:
                _break(
                    result,
                    event,
                    f"entry {event.id} (sequence {event.sequence}): hash does not match its content",
                )
            previous_hash = event.hash
        previous_sequence = event.sequence
    return result


def _break(result: VerifyResult, event: AuditEventBase | ChainEntry, message: str) -> None:
    result.is_valid = False
    result.first_broken = result.first_broken or event
    note_error(result, message)


MAX_ERRORS = 100


def note_error(result: VerifyResult, message: str) -> None:
    """Keeps the first MAX_ERRORS messages and counts the rest in one closing line, so a chain broken
    everywhere (a million entries) neither fills memory nor the response."""
    if len(result.errors) < MAX_ERRORS:
        result.errors.append(message)
        return
    result.errors_not_listed += 1
    summary = f"... and {result.errors_not_listed} more errors not listed"
    if result.errors_not_listed == 1:
        result.errors.append(summary)
    else:
        result.errors[-1] = summary


VERIFY_CHUNK_SIZE = 5000


def audit_verify_chain(
    *, model: type[AuditEventBase], chain: str, chunk_size: int = VERIFY_CHUNK_SIZE
) -> VerifyResult:
    """Streams the chain in sequence order, `chunk_size` rows at a time, so memory stays constant
    whatever its length. On PostgreSQL the rows come from a server-side cursor; it is read inside a
    transaction because outside one (autocommit) the cursor is declared WITH HOLD, which makes the
    server materialize the whole result before the first row arrives."""
    with transaction.atomic():
        rows = (
            model.objects.filter(chain=chain)
            .order_by("sequence")
            .values_list(*ChainEntry._fields)
            .iterator(chunk_size=chunk_size)
        )
        return audit_verify(ChainEntry(*row) for row in rows)


def audit_erase(
    *, model: type[AuditEventBase], event_ids: Iterable[Any], scrub: dict[str, Any] | None = None
) -> int:
    """The one path allowed to modify audit rows: zero the hash and mark the rows erased."""
    with transaction.atomic():
        if connection.vendor == "postgresql":
            with connection.cursor() as cursor:
                cursor.execute("SELECT set_config(%s, 'on', true)", [ERASURE_SETTING])
        values: dict[str, Any] = {"hash": ERASED_HASH, "erased": True}
        if scrub:
            values.update(scrub)
        return model.objects.filter(id__in=list(event_ids)).update(**values)


def _set_local(setting: str, value: str) -> None:
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SELECT set_config(%s, %s, true)", [setting, value])


def audit_mark_deleted(*, model: type[AuditEventBase], chain: str, actor: str, deleted: bool) -> int:
    """Sets (or clears) the `deleted` mark on every event `actor` recorded in `chain`; returns how
    many rows changed. The mark is not part of the hashed entry, so the chain verifies either way."""
    with transaction.atomic():
        # Appends in flight hold the chain lock until they commit: waiting for it means none of the
        # actor's events committed just before this update is missed.
        _lock_chain(model, chain)
        _set_local(DELETION_MARK_SETTING, "on")
        events = model._default_manager.filter(chain=chain, actor=actor)
        changed = events.exclude(deleted=deleted).update(deleted=deleted)
        _set_local(DELETION_MARK_SETTING, "off")  # the allowance covers this one statement only
        return changed


def event_to_dict(event: AuditEventBase) -> dict[str, Any]:
    return {
        "id": str(event.id),
        "timestamp": iso(event.timestamp),
        "actor": event.actor,
        "action": event.action,
        "resource": event.resource,
        "changes": event.changes,
        "hash": event.hash,
        "previousHash": event.previous_hash,
        **({"erased": True} if event.erased else {}),
        **({"deleted": True} if event.deleted else {}),
    }


EXPORT_COLUMNS = ("id", "timestamp", "actor", "action", "resource", "changes", "hash", "previousHash")


def export_csv(events: QuerySet | Iterable[AuditEventBase]) -> Iterator[str]:
    buffer = io.StringIO()
    writer = csv.writer(buffer)

    def flush() -> str:
        value = buffer.getvalue()
        buffer.seek(0)
        buffer.truncate(0)
        return value

    writer.writerow(EXPORT_COLUMNS)
    yield flush()
    iterator = events.iterator(chunk_size=1000) if isinstance(events, QuerySet) else events
    for event in iterator:
        row = event_to_dict(event)
        row["changes"] = json.dumps(row["changes"], sort_keys=True)
        writer.writerow([row[c] for c in EXPORT_COLUMNS])
        yield flush()


def export_json(events: QuerySet | Iterable[AuditEventBase]) -> Iterator[str]:
    yield "["
    iterator = events.iterator(chunk_size=1000) if isinstance(events, QuerySet) else events
    for index, event in enumerate(iterator):
        yield ("," if index else "") + json.dumps(event_to_dict(event))
    yield "]"


def trigger_sql(table: str) -> tuple[str, str]:
    """PostgreSQL DDL refusing UPDATE/DELETE on `table`, except an UPDATE by the erasure path or one
    that changes nothing but the `deleted` mark while the marking path has its setting on."""
    function = f"{table}_append_only"
    forward = f"""
CREATE OR REPLACE FUNCTION {function}() RETURNS trigger AS $$
BEGIN
  IF TG_OP = 'UPDATE' AND current_setting('{ERASURE_SETTING}', true) = 'on' THEN
    RETURN NEW;
  END IF;
  IF TG_OP = 'UPDATE' AND current_setting('{DELETION_MARK_SETTING}', true) = 'on'
     AND (to_jsonb(NEW) - 'deleted') = (to_jsonb(OLD) - 'deleted') THEN
    RETURN NEW;
  END IF;
  RAISE EXCEPTION 'audit events are append-only (% refused on {table})', TG_OP
    USING ERRCODE = 'insufficient_privilege';
END;
$$ LANGUAGE plpgsql;
DROP TRIGGER IF EXISTS {function}_trg ON {table};
CREATE TRIGGER {function}_trg BEFORE UPDATE OR DELETE ON {table}
  FOR EACH ROW EXECUTE FUNCTION {function}();
"""
    backward = f"DROP TRIGGER IF EXISTS {function}_trg ON {table}; DROP FUNCTION IF EXISTS {function}();"
    return forward, backward


def install_trigger_operation(table: str, *, drop_on_reverse: bool = True) -> Any:
    """A migration operation that installs the trigger on PostgreSQL and does nothing elsewhere.
    A migration that only replaces the function passes `drop_on_reverse=False`: undoing it must not
    leave the table without a trigger."""
    from django.db import migrations

    forward_sql, backward_sql = trigger_sql(table)
    if not drop_on_reverse:
        backward_sql = ""

    def forward(apps: Any, schema_editor: Any) -> None:
        if schema_editor.connection.vendor == "postgresql":
            schema_editor.execute(forward_sql, params=None)

    def backward(apps: Any, schema_editor: Any) -> None:
        if schema_editor.connection.vendor == "postgresql" and backward_sql:
            schema_editor.execute(backward_sql, params=None)

    return migrations.RunPython(forward, backward)
