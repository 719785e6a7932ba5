"""A service's checkpoint policy, read from its settings on each use, so that a changed setting (a
rotated key, a new witness) applies at once: AUDIT_SIGNING_KEYS, AUDIT_CHECKPOINT_EVERY_EVENTS,
AUDIT_CHECKPOINT_INTERVAL_SECONDS, AUDIT_WITNESS_FILE and AUDIT_WITNESS_URL."""

from __future__ import annotations

import functools
from collections.abc import Callable

from django.conf import settings

from shared.audit.checkpoints import CheckpointPolicy, Witness
from shared.audit.models import AuditCheckpointBase, AuditEventBase
from shared.audit.signing import Keyring, parse_keys
from shared.audit.witness import file_witness, webhook_witness
from shared.ssrf import Target


@functools.lru_cache(maxsize=4)
def _keyring(entries: tuple[str, ...]) -> Keyring:
    return parse_keys(list(entries))


def _witnesses(*, check_url: Callable[[str], Target], timeout: float) -> tuple[Witness, ...]:
    found: list[Witness] = []
    if settings.AUDIT_WITNESS_FILE:
        found.append(file_witness(settings.AUDIT_WITNESS_FILE))
    if settings.AUDIT_WITNESS_URL:
        found.append(webhook_witness(settings.AUDIT_WITNESS_URL, check_url=check_url, timeout=timeout))
    return tuple(found)


def settings_policy(
    *,
    log: str,
    events: type[AuditEventBase],
    checkpoints: type[AuditCheckpointBase],
    check_url: Callable[[str], Target],
    timeout: float,
) -> CheckpointPolicy:
    """`check_url` is the service's outbound rule for the witness URL; `timeout` its outbound one."""
    return CheckpointPolicy(
        log=log,
        events=events,
        checkpoints=checkpoints,
        keyring=_keyring(tuple(settings.AUDIT_SIGNING_KEYS)),
        every_events=settings.AUDIT_CHECKPOINT_EVERY_EVENTS,
        every_seconds=settings.AUDIT_CHECKPOINT_INTERVAL_SECONDS,
        witnesses=_witnesses(check_url=check_url, timeout=timeout),
    )
