"""Definitions as code for one tenant: case types (with their JSON Schemas), workflows and prompt
templates as YAML documents, planned against the tenant's latest versions, applied in one
transaction, and exported back.

Each document is `kind` and the body the API's create takes for that kind (case_type: key,
displayName, schema...; workflow: caseTypeKey, name, steps...; prompt_template: name, template...),
read by the same input serializer and written by the same services as the API, as a user of the
tenant (an admin unless named). A `connector` document (key, config) holds no secret: each secret
configuration key is written `{env: NAME}` and read from that environment variable at sync time.
The versioned kinds are versioned and nothing is ever overwritten: a
changed case type or prompt template registers its next version; a changed workflow edits its
latest version while that is a draft, else starts a new draft, and with `publish` the draft is
published. An unchanged document changes nothing (no version, no audit row). Nothing is deleted
(versions are history), so there is no prune. Concurrent syncs of one tenant: as the orchestrator's
(an advisory lock per tenant and a fingerprint of the state the plan was made from).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.db import transaction
from rest_framework import serializers

from casemgmt.accounts.models import User
from casemgmt.audit.services import record
from casemgmt.cases.apis import CaseTypeListCreateApi
from casemgmt.cases.models import CaseType
from casemgmt.cases.services import case_type_create
from casemgmt.connectors.apis import ConnectorConfigApi
from casemgmt.connectors.models import ConnectorConfig
from casemgmt.connectors.redaction import MASK
from casemgmt.connectors.selectors import connector_config_values
from casemgmt.connectors.services import connector_config_set, connector_require
from casemgmt.prompts.apis import PromptTemplateListCreateApi
from casemgmt.prompts.models import PromptTemplate
from casemgmt.prompts.services import prompt_template_create, prompt_template_new_version
from casemgmt.tenancy.models import Tenant
from casemgmt.workflows.apis.workflows import WorkflowListCreateApi
from casemgmt.workflows.definitions import steps_of
from casemgmt.workflows.models import Workflow
from casemgmt.workflows.services.workflows import workflow_create, workflow_publish, workflow_update
from shared.api import errors
from shared.api.fields import StrictCharField
from shared.definitions.files import Document, located, validated_items
from shared.definitions.plan import Change, field_diff, plan_body
from shared.locks import try_lock_name


@dataclass(frozen=True)
class Kind:
    name: str
    identity: str  # the body field that names the definition
    serializer: Callable[..., Any]
    latest: Callable[[Any], dict[str, Any]]  # {identity: latest stored object} of a tenant
    stored: Callable[[Any], dict[str, Any]]  # an object as a document holds it (identity left out)
    desired: Callable[[dict[str, Any], Any, bool], dict[str, Any]]  # (validated, latest or None, publish)
    put: Callable[[User, str, dict[str, Any], Any, bool], None]  # (user, id, validated, latest, publish)
    # What a plan shows and an export writes (secrets masked / as environment references).
    redacted: Callable[[str, dict[str, Any]], dict[str, Any]] = lambda _id, fields: fields
    exported: Callable[[str, dict[str, Any]], dict[str, Any]] = lambda _id, fields: fields


def _latest(queryset: Any, identity: str) -> dict[str, Any]:
    latest: dict[str, Any] = {}
    for obj in queryset.order_by(identity, "version"):
        latest[getattr(obj, identity)] = obj
    return latest


# --- case types ----------------------------------------------------------------------------------


def _case_type_stored(case_type: CaseType) -> dict[str, Any]:
    return {
        "displayName": case_type.display_name, "description": case_type.description,
        "schema": case_type.schema, "prefix": case_type.prefix, "slaHours": case_type.sla_hours,
    }  # fmt: skip


def _case_type_desired(data: dict[str, Any], latest: CaseType | None, _publish: bool) -> dict[str, Any]:
    # No prefix in the file: the stored one (a key's prefix never changes; a new key gets a free one).
    prefix = data.get("prefix") or (latest.prefix if latest else None)
    return {
        "displayName": data["displayName"], "description": data["description"], "schema": data["schema"],
        "prefix": prefix, "slaHours": data.get("slaHours"),
    }  # fmt: skip


def _case_type_put(user: User, key: str, data: dict[str, Any], _latest: Any, _publish: bool) -> None:
    case_type_create(
        user=user, key=key, display_name=data["displayName"], description=data["description"],
        schema=data["schema"], prefix=data.get("prefix"), sla_hours=data.get("slaHours"),
    )  # fmt: skip


# --- workflows -----------------------------------------------------------------------------------


def _workflow_content(
    name: str, steps: list[Any], auto_close: bool, sla: int | None, outcomes: Any
) -> dict[str, Any]:
    # Steps compared with their defaults filled in, as publishing stores them.
    return {"name": name, "steps": steps_of({"steps": steps}), "autoClose": auto_close, "slaHours": sla,
            "outcomes": outcomes}  # fmt: skip


def _workflow_stored(workflow: Workflow) -> dict[str, Any]:
    definition = workflow.definition or {}
    content = _workflow_content(workflow.name, definition.get("steps") or [], workflow.auto_close,
                                workflow.sla_hours, definition.get("outcomes"))  # fmt: skip
    return {**content, "status": workflow.status}


def _workflow_desired(data: dict[str, Any], latest: Workflow | None, publish: bool) -> dict[str, Any]:
    content = _workflow_content(
        data["name"], data["steps"], data["autoClose"], data["slaHours"], data["outcomes"]
    )
    same = (
        latest is not None and {k: v for k, v in _workflow_stored(latest).items() if k != "status"} == content
    )
    if publish:
        status = Workflow.PUBLISHED
    else:
        status = latest.status if same and latest is not None else Workflow.DRAFT
    return {**content, "status": status}


def _workflow_put(user: User, key: str, data: dict[str, Any], latest: Workflow | None, publish: bool) -> None:
    args = {"name": data["name"], "steps": data["steps"], "auto_close": data["autoClose"],
            "sla_hours": data["slaHours"], "outcomes": data["outcomes"]}  # fmt: skip
    content = _workflow_content(
        data["name"], data["steps"], data["autoClose"], data["slaHours"], data["outcomes"]
    )
    same = (
        latest is not None and {k: v for k, v in _workflow_stored(latest).items() if k != "status"} == content
    )
    if same and latest is not None and latest.status == Workflow.DRAFT:
        workflow = latest  # only its publishing is asked for
    elif latest is not None and latest.status == Workflow.DRAFT:
        workflow = workflow_update(user=user, workflow=latest, **args)
    else:
        workflow = workflow_create(user=user, case_type_key=key, **args)
    if publish:
        workflow_publish(user=user, workflow=workflow)


# --- prompt templates ----------------------------------------------------------------------------


def _prompt_stored(template: PromptTemplate) -> dict[str, Any]:
    return {
        "template": template.template, "description": template.description, "model": template.model,
        "temperature": template.temperature, "maxTokens": template.max_tokens,
    }  # fmt: skip


def _prompt_put(user: User, name: str, data: dict[str, Any], latest: Any, _publish: bool) -> None:
    create = prompt_template_create if latest is None else prompt_template_new_version
    create(user=user, name=name, template=data["template"], description=data["description"],
           model=data["model"], temperature=data["temperature"], max_tokens=data["maxTokens"])  # fmt: skip


# --- connector configuration ---------------------------------------------------------------------

ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def _secret_keys(key: str) -> frozenset[str]:
    connector, _ = connector_require(key)
    return connector.all_secret_keys()


class ConnectorDocument(ConnectorConfigApi.InputSerializer):
    """The API's configuration body plus the connector's key; secret values are `{env: NAME}`
    references, resolved here (a secret written out in a file is refused)."""

    key = StrictCharField(max_length=100)

    def validate_key(self, key: str) -> str:
        try:
            connector_require(key)
        except errors.NotFound as exc:
            raise serializers.ValidationError(exc.message) from None
        return key

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        secrets, problems, config = _secret_keys(attrs["key"]), {}, {}  # the key is known by now
        for name, value in attrs["config"].items():
            config[name], problem = _resolved(name, value, name in secrets)
            if problem:
                problems[f"config.{name}"] = problem
        if problems:
            raise serializers.ValidationError(problems)
        return {**attrs, "config": config}


def _resolved(name: str, value: Any, secret: bool) -> tuple[Any, str]:
    reference = isinstance(value, dict) and list(value) == ["env"]
    if not reference:
        return value, "a secret: give it as {env: VARIABLE}, never in the file" if secret else ""
    variable = value["env"]
    if not isinstance(variable, str) or not ENV_NAME.match(variable):
        return None, "env must name an environment variable"
    if variable not in os.environ:
        return None, f"environment variable {variable} is not set"
    return os.environ[variable], ""


def _connector_stored(row: ConnectorConfig) -> dict[str, Any]:
    return {"config": connector_config_values(tenant_id=row.tenant_id, key=row.key) or {}}


def _connector_put(user: User, key: str, data: dict[str, Any], _latest: Any, _publish: bool) -> None:
    connector_config_set(user=user, key=key, config=data["config"])


def _connector_redacted(key: str, fields: dict[str, Any]) -> dict[str, Any]:
    secrets = _secret_keys(key)
    return {**fields, "config": {k: MASK if k in secrets else v for k, v in fields["config"].items()}}


def _connector_exported(key: str, fields: dict[str, Any]) -> dict[str, Any]:
    secrets = _secret_keys(key)
    variable = re.sub(r"[^A-Z0-9]+", "_", key.upper())
    config = {
        k: {"env": f"{variable}_{re.sub(r'(?<!^)(?=[A-Z])', '_', k).upper()}"} if k in secrets else v
        for k, v in fields["config"].items()
    }
    return {**fields, "config": config}


KINDS = [  # in the order a sync writes them: a workflow names a case type
    Kind(
        "case_type", "key", CaseTypeListCreateApi.InputSerializer,
        lambda tenant: _latest(CaseType.objects.filter(tenant=tenant), "key"),
        _case_type_stored, _case_type_desired, _case_type_put,
    ),
    Kind(
        "workflow", "caseTypeKey", WorkflowListCreateApi.InputSerializer,
        lambda tenant: _latest(Workflow.objects.filter(tenant=tenant), "case_type_key"),
        _workflow_stored, _workflow_desired, _workflow_put,
    ),
    Kind(
        "prompt_template", "name", PromptTemplateListCreateApi.InputSerializer,
        lambda tenant: _latest(PromptTemplate.objects.filter(tenant=tenant), "name"),
        _prompt_stored, lambda data, _latest, _publish: {
            "template": data["template"], "description": data["description"], "model": data["model"],
            "temperature": data["temperature"], "maxTokens": data["maxTokens"]},
        _prompt_put,
    ),
    Kind(
        "connector", "key", ConnectorDocument,
        lambda tenant: {row.key: row for row in ConnectorConfig.objects.filter(tenant=tenant).order_by("key")},
        _connector_stored, lambda data, _latest, _publish: {"config": data["config"]}, _connector_put,
        redacted=_connector_redacted, exported=_connector_exported,
    ),
]  # fmt: skip
BY_NAME = {kind.name: kind for kind in KINDS}
EXPORT_DEFAULTS = {"description": "", "slaHours": None, "autoClose": False, "outcomes": None, "model": "",
                   "temperature": None, "maxTokens": None}  # fmt: skip


# --- plan and apply --------------------------------------------------------------------------------


@dataclass
class Item:
    kind: Kind
    id: str
    document: Document
    data: dict[str, Any]


@dataclass
class Plan:
    tenant: Tenant
    publish: bool
    changes: list[Change]
    items: dict[tuple[str, str], Item]
    fingerprint: str


def tenant_find(name_or_id: str) -> Tenant:
    tenant = Tenant.objects.filter(name=name_or_id).first()
    if tenant is None and len(name_or_id) == 36:
        tenant = Tenant.objects.filter(pk=name_or_id).first()
    if tenant is None:
        raise errors.NotFound(f"no tenant named {name_or_id!r}")
    return tenant


def _item(document: Document) -> Item:
    kind = BY_NAME.get(document.kind)
    if kind is None:
        raise errors.ValidationFailed(f"kind must be one of {', '.join(BY_NAME)}", field="kind")
    serializer = kind.serializer(data={k: v for k, v in document.body.items() if k != "kind"})
    serializer.is_valid(raise_exception=True)
    return Item(
        kind, str(serializer.validated_data[kind.identity]), document, dict(serializer.validated_data)
    )


def _items(documents: list[Document]) -> dict[tuple[str, str], Item]:
    return validated_items(
        documents, _item, kind_of=lambda item: item.kind.name, id_field_of=lambda item: item.kind.identity
    )


def stored_state(tenant: Tenant) -> dict[str, dict[str, Any]]:
    """{kind: {id: latest stored object}}."""
    return {kind.name: kind.latest(tenant) for kind in KINDS}


def _fingerprint(state: dict[str, dict[str, Any]]) -> str:
    flat = {kind: {pk: BY_NAME[kind].stored(obj) for pk, obj in objs.items()} for kind, objs in state.items()}
    return hashlib.sha256(json.dumps(flat, sort_keys=True, default=str).encode()).hexdigest()


def _shown_diff(
    kind: Kind, object_id: str, before: dict[str, Any] | None, after: dict[str, Any]
) -> dict[str, Any]:
    """The changed fields as people may see them: a changed secret shows as *** -> ***, listed
    but never its values."""
    shown = field_diff(
        None if before is None else kind.redacted(object_id, before), kind.redacted(object_id, after)
    )
    return {name: shown.get(name, {"before": MASK, "after": MASK}) for name in field_diff(before, after)}


def sync_plan(tenant: Tenant, documents: list[Document], *, publish: bool = False) -> Plan:
    items = _items(documents)
    state = stored_state(tenant)
    changes = []
    for (kind_name, object_id), item in items.items():
        latest = state[kind_name].get(object_id)
        desired = item.kind.desired(item.data, latest, publish)
        where = item.document.where
        before = None if latest is None else item.kind.stored(latest)
        if before == desired:
            changes.append(Change(kind_name, object_id, "unchanged", where))
            continue
        changes.append(Change(kind_name, object_id, "create" if before is None else "update", where,
                              _shown_diff(item.kind, object_id, before, desired)))  # fmt: skip
    order = {kind.name: n for n, kind in enumerate(KINDS)}
    changes.sort(key=lambda c: (order[c.kind], c.id))
    return Plan(tenant, publish, changes, items, _fingerprint(state))


def _acting_user(tenant: Tenant, email: str | None) -> User:
    users = User.objects.filter(tenant=tenant, is_active=True)
    user = (
        users.filter(email=email).first()
        if email
        else users.filter(roles__name="admin").order_by("email").first()
    )
    if user is None:
        raise errors.ValidationFailed(
            f"no active {'user ' + email if email else 'admin'} in tenant {tenant.name}", field="as"
        )
    return user


class _DryRun(Exception):
    pass


def sync_apply(
    plan: Plan, *, as_email: str | None = None, source: str = "", dry_run: bool = False
) -> dict[str, Any]:
    """Applies the plan for its tenant in one transaction (a dry run rolls it back), as the user
    `as_email` (default: the tenant's first admin by email); audited like the orchestrator's sync."""
    user = _acting_user(plan.tenant, as_email)
    try:
        with transaction.atomic():
            if not dry_run:
                if not try_lock_name(f"case:definitions-sync:{plan.tenant.pk}"):
                    raise errors.VersionConflict(
                        "Another definitions sync of this tenant is being applied; plan again."
                    )
                if _fingerprint(stored_state(plan.tenant)) != plan.fingerprint:
                    raise errors.VersionConflict(
                        "The definitions changed since this plan was made; plan again."
                    )
            _write(plan, user)
            changed = [c for c in plan.changes if c.action != "unchanged"]
            if changed and not dry_run:
                record(
                    tenant_id=plan.tenant.pk, actor=str(user.id), action="definitions:synced",
                    resource="definitions", changes={"source": source, "changes": [
                        {"kind": c.kind, "id": c.id, "action": c.action, "file": c.file} for c in changed]},
                )  # fmt: skip
            if dry_run:
                raise _DryRun
    except _DryRun:
        pass
    return plan_body(plan.changes, applied=not dry_run)


def _write(plan: Plan, user: User) -> None:
    state = stored_state(plan.tenant)
    for change in plan.changes:
        if change.action == "unchanged":
            continue
        item = plan.items[(change.kind, change.id)]
        try:
            item.kind.put(user, item.id, item.data, state[change.kind].get(item.id), plan.publish)
        except errors.ApplicationError as exc:
            raise located(exc, item.document.where) from None


# --- export --------------------------------------------------------------------------------------


def export_documents(tenant: Tenant) -> dict[str, list[dict[str, Any]]]:
    """The latest version of every definition of the tenant as documents (a workflow's steps as
    stored), fields at their default left out."""
    exported: dict[str, list[dict[str, Any]]] = {}
    for kind, objects in stored_state(tenant).items():
        documents = []
        for object_id, obj in objects.items():
            document: dict[str, Any] = {"kind": kind, BY_NAME[kind].identity: object_id}
            for name, value in BY_NAME[kind].exported(object_id, BY_NAME[kind].stored(obj)).items():
                if name == "status" or EXPORT_DEFAULTS.get(name, ...) == value:
                    continue
                document[name] = value
            documents.append(document)
        exported[kind] = documents
    return exported
