"""Which signed form an inbound delivery uses, whether it holds, and what makes it one-use.

A webhook with a secret takes three forms (the first that the headers name):
1. Standard Webhooks: `webhook-id`, `webhook-timestamp`, `webhook-signature: v1,<base64>` of
   `<id>.<timestamp>.<body>` (several space-separated signatures while the sender rotates).
2. `X-Webhook-Id` + `X-Webhook-Timestamp` + `X-Webhook-Signature: sha256=<hex>` of
   `<id>.<timestamp>.<body>`.
3. `X-Webhook-Signature: sha256=<hex>` of the raw body alone (refused when the webhook takes
   Standard Webhooks only).
The timestamped forms are refused more than WEBHOOK_SIGNATURE_WINDOW_SECONDS from now, and their
signed id becomes the delivery id, which is taken once per webhook. The body-only form cannot be
dated, so its signature is taken once per webhook instead: the identical signed request sent again
is a replay. Either way a repeat is accepted with no effect (202 `duplicate`), so a sender retrying
after a lost answer stops, and a replaying attacker changes nothing.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from django.conf import settings

from casemgmt.webhooks.models import InboundWebhook
from shared import crypto, signing
from shared.api import errors


@dataclass(frozen=True)
class Signed:
    """What a verified delivery contributes to its replay guard."""

    delivery_id: str | None = None  # the signed id of a timestamped form
    digest: str | None = None  # the hex signature of a body-only form


UNSIGNED = Signed()


def check_delivery_id(value: str) -> str:
    if len(value) > 200 or not value.isprintable():
        raise errors.ValidationFailed("the delivery id must be at most 200 printable characters")
    return value


def verify(webhook: InboundWebhook, body: bytes, headers: Mapping[str, str]) -> Signed:
    """Raises NotAuthenticated (401) for a missing, bad or stale signature; UNSIGNED when the
    webhook has no secret (its key alone admits a delivery, and nothing stops a replay)."""
    if not webhook.secret_encrypted:
        return UNSIGNED
    secret = str(crypto.decrypt_json(webhook.secret_encrypted))
    if any(headers.get(h) for h in ("webhook-signature", "webhook-id", "webhook-timestamp")):
        return _standard(secret, body, headers)
    if webhook.signature_scheme == InboundWebhook.STANDARD_SIGNATURE:
        raise errors.NotAuthenticated(
            "This webhook takes Standard Webhooks signatures only "
            "(webhook-id, webhook-timestamp, webhook-signature)."
        )
    if headers.get("X-Webhook-Timestamp"):
        return _timestamped(secret, body, headers)
    return _body_only(secret, body, headers.get("X-Webhook-Signature"))


def _fresh(timestamp: str, name: str) -> None:
    if not signing.timestamp_fresh(timestamp, settings.WEBHOOK_SIGNATURE_WINDOW_SECONDS):
        raise errors.NotAuthenticated(f"{name} is missing or outside the accepted window.")


def _standard(secret: str, body: bytes, headers: Mapping[str, str]) -> Signed:
    msg_id, timestamp = headers.get("webhook-id") or "", headers.get("webhook-timestamp") or ""
    if not msg_id or not signing.standard_verify(
        secret, msg_id, timestamp, body, headers.get("webhook-signature")
    ):
        raise errors.NotAuthenticated("Invalid or missing webhook-signature.")
    _fresh(timestamp, "webhook-timestamp")
    return Signed(delivery_id=check_delivery_id(msg_id))


def _timestamped(secret: str, body: bytes, headers: Mapping[str, str]) -> Signed:
    msg_id, timestamp = headers.get("X-Webhook-Id") or "", headers.get("X-Webhook-Timestamp") or ""
    message = signing.timestamped(timestamp, body, msg_id=msg_id)
    given = signing.sha256_normalise(headers.get("X-Webhook-Signature"))
    if not msg_id or not signing.sha256_verify(secret, message, given):
        raise errors.NotAuthenticated("Invalid or missing X-Webhook-Signature (over id.timestamp.body).")
    _fresh(timestamp, "X-Webhook-Timestamp")
    return Signed(delivery_id=check_delivery_id(msg_id))


def _body_only(secret: str, body: bytes, header: str | None) -> Signed:
    given = signing.sha256_normalise(header)
    if not signing.sha256_verify(secret, body, given):
        raise errors.NotAuthenticated("Invalid or missing X-Webhook-Signature.")
    if given is None:
        raise RuntimeError("a verified signature is present")
    return Signed(digest=given.removeprefix(signing.PREFIX))
