"""Writes for inbound webhooks: their configuration (admin) and the deliveries they receive."""

from __future__ import annotations

import re
import uuid
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from django.db import IntegrityError, transaction
from django.db.models import Q

from casemgmt.accounts.models import User
from casemgmt.accounts.services import user_create
from casemgmt.audit.services import record
from casemgmt.cases.models import Case, CaseType
from casemgmt.cases.services import case_create, case_update_data
from casemgmt.webhooks.mapping import case_reference, check_mapping, map_payload, parse_pointer
from casemgmt.webhooks.models import InboundDelivery, InboundWebhook
from casemgmt.webhooks.signatures import Signed
from casemgmt.workflows.services.control import case_message_deliver
from casemgmt.workflows.steps.wait import MESSAGE_RE
from shared import crypto
from shared.api.errors import AlreadyExists, NotFound, ValidationFailed
from shared.auth import apikeys

if TYPE_CHECKING:
    from casemgmt.tenancy.models import Tenant

KEY_LABEL = "whk"
PATH_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*(/[A-Za-z0-9][A-Za-z0-9._-]*)*$")
SECRET_MIN, SECRET_MAX = 16, 256
# Audit: configuring an inbound webhook is configuring the `webhook_inbound` connector.
CONFIGURED = "connector:configured"


@dataclass(frozen=True)
class WebhookValues:
    """What an admin sets on an inbound webhook (None: keep the current value on update)."""

    path: str | None = None
    case_type_key: str | None = None
    mapping: dict[str, str] | None = None
    case_pointer: str | None = None
    is_active: bool | None = None
    signature_scheme: str | None = None
    message: str | None = None


def _check_path(path: str) -> str:
    if len(path) > 200 or not PATH_RE.match(path):
        raise ValidationFailed(
            "path must be segments of letters, digits, '.', '_' and '-' joined by '/' (at most 200)",
            field="path",
        )
    return path


def _check_case_type(tenant_id: Any, key: str) -> str:
    if not CaseType.objects.filter(tenant_id=tenant_id, key=key).exists():
        raise ValidationFailed(f"no case type with key {key!r}", field="caseTypeKey")
    return key


def _check_secret(secret: str) -> str:
    if not SECRET_MIN <= len(secret) <= SECRET_MAX:
        raise ValidationFailed(f"secret must be {SECRET_MIN} to {SECRET_MAX} characters", field="secret")
    return secret


def _apply(webhook: InboundWebhook, values: WebhookValues) -> None:
    if values.path is not None:
        webhook.path = _check_path(values.path)
    if values.case_type_key is not None:
        webhook.case_type_key = _check_case_type(webhook.tenant_id, values.case_type_key)
    if values.mapping is not None:
        webhook.mapping = check_mapping(values.mapping)
    if values.case_pointer is not None:
        if values.case_pointer:
            parse_pointer(values.case_pointer, field="casePointer", allow_root=False)
        webhook.case_pointer = values.case_pointer
    if values.is_active is not None:
        webhook.is_active = values.is_active
    if values.signature_scheme is not None:
        webhook.signature_scheme = values.signature_scheme
    if values.message is not None:
        if values.message and not MESSAGE_RE.match(values.message):
            raise ValidationFailed(
                "message must be a letter followed by up to 99 of A-Z a-z 0-9 _ . -", field="message"
            )
        webhook.message = values.message


def _check_message(webhook: InboundWebhook) -> None:
    # A message goes to the case the payload names: without a pointer there is none.
    if webhook.message and not webhook.case_pointer:
        raise ValidationFailed("a webhook with a message needs casePointer", field="casePointer")


def _check_scheme(webhook: InboundWebhook) -> None:
    # Standard Webhooks only means signed: without a secret nothing could be verified.
    if webhook.signature_scheme == InboundWebhook.STANDARD_SIGNATURE and not webhook.secret_encrypted:
        raise ValidationFailed("signatureScheme standard needs a secret", field="signatureScheme")


def _set_secret(webhook: InboundWebhook, secret: str | None) -> None:
    """A string sets (re-encrypts) the secret; "" or None removes it."""
    webhook.secret_encrypted = crypto.encrypt_json(_check_secret(secret)) if secret else ""


def _new_key(webhook: InboundWebhook) -> str:
    key = apikeys.generate(KEY_LABEL)
    webhook.key_hash, webhook.key_prefix = key.hashed, key.prefix
    return key.plaintext


def _save(webhook: InboundWebhook) -> None:
    # The unique (tenant, path) constraint decides races; a savepoint keeps the transaction usable.
    try:
        with transaction.atomic():
            webhook.save()
    except IntegrityError:
        raise AlreadyExists(f"an inbound webhook with path {webhook.path!r} exists", field="path") from None


def _audit(webhook: InboundWebhook, actor: User, operation: str, **extra: Any) -> None:
    record(
        tenant_id=webhook.tenant_id,
        actor=str(actor.id),
        action=CONFIGURED,
        resource=f"webhooks/inbound/{webhook.id}",
        changes={
            "connector": "webhook_inbound",
            "operation": operation,
            "path": webhook.path,
            "caseTypeKey": webhook.case_type_key,
            "mapping": webhook.mapping,
            "casePointer": webhook.case_pointer or None,
            "isActive": webhook.is_active,
            "signed": bool(webhook.secret_encrypted),  # never the secret itself
            "signatureScheme": webhook.signature_scheme,
            "message": webhook.message or None,
            **extra,
        },
    )


@transaction.atomic
def inbound_webhook_create(
    *, tenant: Tenant, actor: User, values: WebhookValues, secret: str | None
) -> tuple[InboundWebhook, str]:
    """The new webhook and its key in plain text (shown this once; only its hash is stored)."""
    if values.path is None or values.case_type_key is None:
        raise ValidationFailed("path and caseTypeKey are required", field="path")
    webhook = InboundWebhook(id=uuid.uuid4(), tenant=tenant, created_by=actor)
    _apply(webhook, values)
    _set_secret(webhook, secret)
    _check_scheme(webhook)
    _check_message(webhook)
    key = _new_key(webhook)
    # Deliveries act as an agent principal of their own: it has no roles and no credentials, and
    # names the webhook as the author of the cases it creates and updates.
    webhook.principal = user_create(
        tenant=tenant,
        email=f"webhook-{webhook.id}@inbound-webhooks.invalid",
        display_name=f"Inbound webhook {webhook.path}"[:200],
        roles=[],
        kind=User.KIND_AGENT,
        actor=str(actor.id),
    )
    _save(webhook)
    _audit(webhook, actor, "created")
    return webhook, key


@transaction.atomic
def inbound_webhook_update(
    *,
    webhook: InboundWebhook,
    actor: User,
    values: WebhookValues,
    secret: str | None,
    change_secret: bool,
    rotate_key: bool,
) -> tuple[InboundWebhook, str | None]:
    """The webhook and, when `rotate_key`, its new key in plain text (the old one stops working)."""
    webhook = InboundWebhook.objects.select_for_update(no_key=True).get(pk=webhook.pk)
    _apply(webhook, values)
    if change_secret:
        _set_secret(webhook, secret)
    _check_scheme(webhook)
    _check_message(webhook)
    key = _new_key(webhook) if rotate_key else None
    _save(webhook)
    _audit(webhook, actor, "updated", keyRotated=rotate_key, secretChanged=change_secret)
    return webhook, key


@transaction.atomic
def inbound_webhook_delete(*, webhook: InboundWebhook, actor: User) -> None:
    _audit(webhook, actor, "deleted")
    webhook.delete()


def inbound_webhook_secrets_rotate() -> int:
    """Re-encrypts every stored secret with the first encryption key; returns how many. Rows are
    locked one at a time, so a concurrent update of a webhook is never overwritten."""
    count = 0
    pks = InboundWebhook.objects.exclude(secret_encrypted="").values_list("pk", flat=True)
    for pk in list(pks):
        with transaction.atomic():
            webhook = (
                InboundWebhook.objects.select_for_update(no_key=True)
                .filter(pk=pk)
                .exclude(secret_encrypted="")
                .first()
            )
            if webhook is not None:
                webhook.secret_encrypted = crypto.rotate(webhook.secret_encrypted)
                webhook.save(update_fields=["secret_encrypted"])
                count += 1
    return count


# --- receiving ------------------------------------------------------------------------------------


def key_matches(webhook: InboundWebhook, key: str | None) -> bool:
    return bool(key) and apikeys.matches(key or "", webhook.key_hash)


@dataclass(frozen=True)
class Received:
    delivery: InboundDelivery
    duplicate: bool


def _target_case(webhook: InboundWebhook, reference: str) -> Case:
    cases = Case.objects.filter(tenant_id=webhook.tenant_id, case_type__key=webhook.case_type_key)
    try:
        by_id = cases.filter(id=uuid.UUID(reference))
    except ValueError:
        by_id = cases.none()
    case = by_id.first() or cases.filter(case_number=reference).first()
    if case is None:
        raise NotFound(f"no {webhook.case_type_key} case {reference!r}")
    return case


def _claim_delivery(webhook: InboundWebhook, signed: Signed) -> InboundDelivery | None:
    """A new delivery row, or None when its delivery id or body signature was already taken. A
    concurrent twin waits on the unique index until the first commits, then finds it taken; if the
    first rolls back (its case failed validation) the twin goes ahead."""
    try:
        with transaction.atomic():
            return InboundDelivery.objects.create(
                tenant_id=webhook.tenant_id,
                webhook=webhook,
                delivery_id=signed.delivery_id,
                signature_digest=signed.digest,
            )
    except IntegrityError:
        return None


def _original(webhook: InboundWebhook, signed: Signed) -> InboundDelivery:
    nothing = Q(pk__in=[])
    by_id = Q(delivery_id=signed.delivery_id) if signed.delivery_id else nothing
    by_digest = Q(signature_digest=signed.digest) if signed.digest else nothing
    return InboundDelivery.objects.filter(by_id | by_digest, webhook=webhook).earliest("id")


@transaction.atomic
def inbound_webhook_receive(*, webhook: InboundWebhook, signed: Signed, payload: Any) -> Received:
    """Creates a case of the webhook's case type (its workflow starts) or, when the payload names
    an existing case, merges the mapped data into it (RFC 7386), or, for a webhook with a
    `message`, completes that case's active wait step for it (409 when none is waiting). One delivery id, and one body-only
    signature, is taken once: a repeat is accepted with no effect."""
    delivery = _claim_delivery(webhook, signed)
    if delivery is None:
        return Received(delivery=_original(webhook, signed), duplicate=True)
    data = map_payload(webhook.mapping, payload)
    reference = case_reference(webhook.case_pointer, payload)
    principal = webhook.principal
    if reference is not None and webhook.message:
        case = _target_case(webhook, reference)
        case_message_deliver(user=principal, case=case, name=webhook.message, data=data)
        delivery.outcome = InboundDelivery.MESSAGE
    elif reference is not None:
        case = case_update_data(
            user=principal, case=_target_case(webhook, reference), patch=data, expected_version=None
        )
        delivery.outcome = InboundDelivery.MERGED
    else:
        case_type = (
            CaseType.objects.filter(tenant_id=webhook.tenant_id, key=webhook.case_type_key)
            .order_by("-version")
            .first()
        )
        if case_type is None:
            raise NotFound(f"case type {webhook.case_type_key!r} no longer exists")
        case = case_create(user=principal, case_type=case_type, data=data)
        delivery.outcome = InboundDelivery.CREATED
    delivery.case = case
    delivery.save(update_fields=["outcome", "case"])
    return Received(delivery=delivery, duplicate=False)
