"""Connector configuration and test calls (every write audited in its own transaction)."""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING, Any
from uuid import UUID

from django.db import transaction

from casemgmt.audit.services import record
from casemgmt.connectors.base import Action, Connector, ConnectorError
from casemgmt.connectors.inputs import InputProblems, prepared_inputs, type_problem
from casemgmt.connectors.invocation import Call, Outcome, invoke, tenant_config
from casemgmt.connectors.models import ConnectorConfig, Invocation
from casemgmt.connectors.redaction import MASK, redact_config, scrub_value
from casemgmt.connectors.registry import connector_get
from casemgmt.connectors.selectors import UNDECRYPTABLE_CONFIG, connector_config_get_or_none
from shared import crypto
from shared.api.errors import NotConfigured, NotFound, ValidationFailed
from shared.api.time import iso, now_ms

if TYPE_CHECKING:
    from casemgmt.accounts.models import User


def _tenant(user: User) -> UUID:
    # Every API principal belongs to a tenant (only platform superusers have none).
    if user.tenant_id is None:
        raise RuntimeError("every API principal belongs to a tenant")
    return user.tenant_id


def connector_require(key: str, action: str | None = None) -> tuple[Connector, Action | None]:
    connector = connector_get(key)
    if connector is None or not connector.listed:
        raise NotFound(f"connector {key!r} not found")
    if action is None:
        return connector, None
    found = connector.actions.get(action)
    if found is None or not connector.invocable:
        raise NotFound(f"action {action!r} of connector {key!r} not found")
    return connector, found


def _config_errors(connector: Connector, config: dict[str, Any]) -> list[dict[str, str]]:
    errors = [
        {"field": f"config.{name}", "error": "is not a configuration key of this connector"}
        for name in config
        if name not in connector.config_keys
    ]
    for name, spec in connector.config_keys.items():
        value = config.get(name)
        if value in (None, ""):
            if spec.required:
                errors.append({"field": f"config.{name}", "error": "is required"})
        elif problem := type_problem(spec, value):
            errors.append({"field": f"config.{name}", "error": problem})
    return errors or connector.check_config(config)


def _stored(row: ConnectorConfig | None, *, missing_key_ok: bool) -> dict[str, Any]:
    """The stored configuration. One that no configured key opens (its key was dropped before
    `rotate_connector_keys` ran) reads as a 503 `not_configured`, and a PUT replaces it."""
    if row is None:
        return {}
    try:
        return crypto.decrypt_json(row.config_encrypted)
    except crypto.UndecryptableSecret:
        if missing_key_ok:
            return {}
        raise NotConfigured(
            "the stored configuration does not decrypt with the configured keys; store it again"
        ) from None


def connector_config_errors(*, key: str, config: dict[str, Any]) -> list[dict[str, str]]:
    """What `connector_config_set` would refuse in `config` (a masked secret counts as given), so
    a form can show it on the form instead of losing what was typed."""
    connector, _ = connector_require(key)
    secret_keys = connector.all_secret_keys()
    return _config_errors(
        connector, {k: ("x" if v == MASK and k in secret_keys else v) for k, v in config.items()}
    )


@transaction.atomic
def connector_config_set(*, user: User, key: str, config: dict[str, Any]) -> ConnectorConfig:
    """Stores a tenant's configuration, encrypted with the current first key. A secret given as
    "***" (what GET shows) keeps its stored value, so a configuration read, edited and written
    back does not lose its credentials."""
    connector, _ = connector_require(key)
    row = ConnectorConfig.objects.select_for_update().filter(tenant_id=_tenant(user), key=key).first()
    previous = _stored(row, missing_key_ok=True)
    secret_keys = connector.all_secret_keys()
    merged = {k: (previous.get(k) if v == MASK and k in secret_keys else v) for k, v in config.items()}
    if errors := _config_errors(connector, merged):
        raise ValidationFailed.from_errors(errors)
    row = row or ConnectorConfig(tenant_id=_tenant(user), key=key)
    row.config_encrypted, row.updated_by = crypto.encrypt_json(merged), user
    row.save()
    changed = sorted(k for k in set(merged) | set(previous) if merged.get(k) != previous.get(k))
    record(
        tenant_id=_tenant(user), actor=str(user.id), action="connector:configured",
        resource=f"connectors/{key}", changes={"keys": sorted(merged), "changedKeys": changed},
    )  # fmt: skip
    return row


def connector_config_redacted(*, tenant_id: Any, key: str) -> dict[str, Any]:
    connector, _ = connector_require(key)
    row = connector_config_get_or_none(tenant_id=tenant_id, key=key)
    config = _stored(row, missing_key_ok=False)
    return {
        "key": key,
        "config": redact_config(config, connector.all_secret_keys()),
        "updatedAt": iso(row.updated_at) if row is not None else None,
    }


def connector_configs_rotate() -> int:
    """Re-encrypts every stored configuration with the first key (after adding a new key)."""
    count = 0
    for pk in ConnectorConfig.objects.values_list("pk", flat=True):
        with transaction.atomic():
            row = ConnectorConfig.objects.select_for_update().get(pk=pk)
            row.config_encrypted = crypto.rotate(row.config_encrypted, what=UNDECRYPTABLE_CONFIG)
            row.save(update_fields=["config_encrypted"])
            count += 1
    return count


def test_context(context: dict[str, Any]) -> dict[str, Any]:
    return {
        "case_data": context.get("case_data") or {},
        "case_number": context.get("case_number") or "",
        "step_results": context.get("step_results") or {},
        "now": iso(now_ms()),
        "case_id": None,
    }


def connector_test(
    *, user: User, key: str, action: str, inputs: dict[str, Any], context: dict[str, Any], dry_run: bool
) -> dict[str, Any]:
    """A dry run renders and checks the inputs; a live run performs the call now (no retries).
    Inputs that fail to render or check are a 400; a failed call is a 200 with success false."""
    connector, found = connector_require(key, action)
    if found is None:
        raise RuntimeError("connector_require returns the action it found")
    template = test_context(context)
    try:
        prepared = prepared_inputs(connector, found, inputs, template)
    except InputProblems as exc:
        raise ValidationFailed.from_errors(
            [{**e, "field": f"config.{e['field']}"} for e in exc.errors]
        ) from exc
    if dry_run:
        body = _dry_run(connector, user, prepared)
    else:
        call = Call(tenant_id=_tenant(user), idempotency_key=f"test-{uuid.uuid4()}", source=Invocation.TEST,
                    template_context=template)  # fmt: skip
        body = _test_out(invoke(connector, action, prepared, call))
    _audit_test(user, key, action, dry_run, body["success"])
    return body


def _dry_run(connector: Connector, user: User, prepared: dict[str, Any]) -> dict[str, Any]:
    try:
        _, secrets = tenant_config(connector, _tenant(user))
    except ConnectorError:  # not configured (or undecryptable): there is no secret to scrub
        secrets = ()
    return {"success": True, "result": {"resolved": scrub_value(prepared, secrets)}, "error": None}


def _test_out(outcome: Outcome) -> dict[str, Any]:
    if outcome.error is None and outcome.result is not None:
        done = {"statusCode": outcome.result.status_code, "body": outcome.result.body}
        return {"success": True, "result": done, "error": None}
    error = outcome.error
    if error is None:
        raise RuntimeError("a failed call carries its error")
    result = {"statusCode": error.status_code, "body": error.body} if error.status_code is not None else None
    return {"success": False, "result": result, "error": {"code": error.code, "message": error.message}}


def _audit_test(user: User, key: str, action: str, dry_run: bool, success: bool) -> None:
    with transaction.atomic():
        record(
            tenant_id=_tenant(user), actor=str(user.id), action="connector:tested",
            resource=f"connectors/{key}", changes={"action": action, "dryRun": dry_run, "success": success},
        )  # fmt: skip
