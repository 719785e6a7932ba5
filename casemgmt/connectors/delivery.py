"""The outbound outbox: every connector call a workflow makes is a `Delivery` row.

1. `delivery_create` writes the row in the transaction of the case change that causes the call
   (a step becoming active), with the inputs rendered against the case at that moment, and queues
   a send once that transaction commits. A rollback leaves neither row nor call.
2. A worker runs `delivery_send`: a conditional UPDATE claims the row (pending and due -> sending,
   attempts + 1, a lease), committed before the call, so a duplicated or redelivered message finds
   nothing to claim and never sends again. The call's outcome settles the row: delivered; or
   pending again with the next wait (1, 2, 4, 8 s... capped) after a transient failure while
   attempts remain; or dead. A workflow step learns the final outcome (result, or onFailure).
3. `deliveries_sweep` (periodic) re-queues due rows whose message was lost and takes back rows
   whose worker died mid-call (lease over): the next attempt carries the same idempotency key, so
   a receiver that keys on it applies the call once.
4. `delivery_replay` (an admin) puts a dead row back to pending with a fresh count of attempts.
"""

from __future__ import annotations

import logging
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from django.conf import settings
from django.db import transaction
from django.db.models import F, Q

from casemgmt.audit.services import record
from casemgmt.connectors.base import ConnectorError
from casemgmt.connectors.inputs import InputProblems, prepared_inputs
from casemgmt.connectors.invocation import Call, Outcome, invoke
from casemgmt.connectors.models import Delivery, Invocation
from casemgmt.connectors.queue import enqueue_delivery
from casemgmt.connectors.registry import connector_get
from casemgmt.tenancy import rls
from casemgmt.workflows.engine import template_context
from casemgmt.workflows.models import CaseStep
from casemgmt.workflows.services.steps import step_fail, step_succeed
from shared import backoff
from shared.api.errors import ApplicationError
from shared.api.time import now_ms

if TYPE_CHECKING:
    from casemgmt.accounts.models import User
    from casemgmt.cases.models import Case

logger = logging.getLogger(__name__)
EARLY_TOLERANCE = timedelta(seconds=1)  # a Celery countdown may fire a little early
STALE_PENDING = timedelta(seconds=30)  # a due row untouched this long lost its queued message


class InvalidState(ApplicationError):
    status_code = 409
    code = "invalid_state"


def backoff_seconds(attempt: int) -> float:
    """The wait after failed attempt n: base * 2**(n-1), capped (1, 2, 4, 8 ... 60 s by default)."""
    return backoff.exponential(
        attempt, base=settings.CONNECTOR_RETRY_BASE_SECONDS, cap=settings.CONNECTOR_RETRY_MAX_SECONDS
    )


def lease() -> timedelta:
    """How long one attempt may run before it counts as lost (longer than any call it may make)."""
    return timedelta(seconds=settings.CONNECTOR_ATTEMPT_LEASE_SECONDS)


def delivery_create(
    *, case: Case, connector_key: str, action: str, raw_inputs: dict[str, Any], retries: int,
    template_context: dict[str, Any], step: CaseStep | None = None,
) -> Delivery:  # fmt: skip
    """Runs inside the caller's transaction. Inputs that do not render or check are kept as
    `render_error`: the worker then fails the call without sending (onFailure applies)."""
    connector = connector_get(connector_key)
    found = connector.actions.get(action) if connector else None
    inputs: dict[str, Any] = {}
    render_error = ""
    if connector is None or found is None:
        render_error = f"unknown connector action {connector_key}.{action}"
    else:
        try:
            inputs = prepared_inputs(connector, found, raw_inputs, template_context)
        except InputProblems as exc:
            render_error = "; ".join(f"{e['field']}: {e['error']}" for e in exc.errors)
    delivery = Delivery.objects.create(
        tenant_id=case.tenant_id, connector=connector_key, action=action, case=case, step=step,
        inputs=inputs, render_error=render_error, max_attempts=retries + 1, next_attempt_at=now_ms(),
    )  # fmt: skip
    # robust: a broker outage must not fail the committed change; the sweep sends the row later.
    transaction.on_commit(lambda: enqueue_delivery(delivery.pk), robust=True)
    return delivery


def _claim(delivery_id: str) -> Delivery | None:
    now = now_ms()
    claimed = Delivery.objects.filter(
        pk=delivery_id, status=Delivery.PENDING, next_attempt_at__lte=now + EARLY_TOLERANCE
    ).update(status=Delivery.SENDING, attempts=F("attempts") + 1, claimed_until=now + lease())
    if not claimed:
        return None
    return Delivery.objects.select_related("step", "case").get(pk=delivery_id)


def delivery_send(*, delivery_id: str) -> None:
    """One attempt (see the module docstring); a no-op unless this call claims the row."""
    delivery = _claim(delivery_id)
    if delivery is None:
        return
    connector = connector_get(delivery.connector)
    step = delivery.step
    if not delivery.replays and step is not None and (step.status != step.ACTIVE or step.is_task):
        # The workflow moved on without this call (case closed or cancelled meanwhile): not sent.
        _settle(delivery, Outcome(error=ConnectorError("step_inactive", f"step is {step.status}")))
        return
    if delivery.render_error or connector is None:
        outcome = Outcome(error=ConnectorError("invalid_input", delivery.render_error or "unknown connector"))
    else:
        call = Call(
            tenant_id=delivery.tenant_id, idempotency_key=str(delivery.pk), delivery=delivery,
            source=Invocation.REPLAY if delivery.replays else Invocation.STEP, case_id=delivery.case_id,
            step_id=delivery.step.step_id if delivery.step else None, attempt=delivery.attempts,
            template_context=_send_context(delivery),
        )  # fmt: skip
        outcome = invoke(connector, delivery.action, delivery.inputs, call)
    _settle(delivery, outcome)


def _send_context(delivery: Delivery) -> dict[str, Any]:
    """The case as it is when the call is made, for connectors that render templates of their own
    (a snapshot from when the call was queued is what `prepare` stores in the inputs)."""
    if delivery.case is None:
        return {}
    return {**template_context(delivery.case), "case_id": str(delivery.case_id)}


def _settle(delivery: Delivery, outcome: Outcome) -> None:
    error = outcome.error
    if error is not None and error.transient and delivery.attempts < delivery.max_attempts:
        _schedule_retry(delivery, error)
        return
    with transaction.atomic():
        mine = Delivery.objects.filter(pk=delivery.pk, status=Delivery.SENDING, attempts=delivery.attempts)
        if error is None and outcome.result is not None:
            result = outcome.result.step_result()
            if not mine.update(status=Delivery.DELIVERED, result=result, delivered_at=now_ms(),
                               last_status=outcome.result.status_code, last_error="", claimed_until=None):  # fmt: skip
                return  # the sweep took the row back meanwhile; its attempt settles it
            if delivery.step_id:
                step_succeed(step_pk=delivery.step_id, result=result)
            return
        if error is None:
            raise RuntimeError("a failed delivery carries its error")
        message = f"{error.code}: {error.message} (after {delivery.attempts} attempt(s))"
        if mine.update(
            status=Delivery.DEAD, last_status=error.status_code, last_error=message, claimed_until=None
        ):
            _dead(delivery, message)


def _schedule_retry(delivery: Delivery, error: ConnectorError) -> None:
    countdown = backoff_seconds(delivery.attempts)
    updated = Delivery.objects.filter(pk=delivery.pk, status=Delivery.SENDING, attempts=delivery.attempts).update(
        status=Delivery.PENDING, next_attempt_at=now_ms() + timedelta(seconds=countdown),
        last_status=error.status_code, last_error=f"{error.code}: {error.message}", claimed_until=None,
    )  # fmt: skip
    if updated:
        logger.info(
            "delivery %s attempt %s failed (%s); retry in %ss",
            delivery.pk,
            delivery.attempts,
            error.code,
            countdown,
        )
        enqueue_delivery(delivery.pk, countdown=countdown)


def _dead(delivery: Delivery, message: str) -> None:
    """Dead-lettered (in the settling transaction): the step's onFailure applies."""
    logger.warning("delivery %s dead: %s", delivery.pk, message)
    if delivery.step_id:
        CaseStep.objects.filter(pk=delivery.step_id).update(attempts=delivery.attempts)
        step_fail(
            step_pk=delivery.step_id,
            error=f"connector {delivery.connector}.{delivery.action} failed: {message}",
        )


def deliveries_sweep(*, limit: int = 500) -> int:
    """Re-queues lost work; returns how many rows it kicked."""
    now = now_ms()
    kicked = 0
    lost = Delivery.objects.filter(status=Delivery.SENDING, claimed_until__lt=now)
    for pk, tenant_id in lost.values_list("pk", "tenant_id")[:limit]:
        kicked += _take_back(pk, tenant_id, now)
    stale = Delivery.objects.filter(status=Delivery.PENDING, next_attempt_at__lt=now - STALE_PENDING)
    for pk in stale.values_list("pk", flat=True)[:limit]:
        enqueue_delivery(pk)
        kicked += 1
    return kicked


def _take_back(pk: Any, tenant_id: Any, now: Any) -> int:
    """A row whose worker died mid-call: another attempt if any remain, else dead (and its step's
    onFailure runs), in the row's tenant context."""
    with rls.tenant_transaction(tenant_id):
        delivery = (
            Delivery.objects.select_for_update()
            .filter(pk=pk, status=Delivery.SENDING, claimed_until__lt=now)
            .first()
        )
        if delivery is None:
            return 0
        if delivery.attempts < delivery.max_attempts:
            delivery.status, delivery.next_attempt_at, delivery.claimed_until = Delivery.PENDING, now, None
            delivery.last_error = "worker lost the attempt"
            delivery.save(
                update_fields=["status", "next_attempt_at", "claimed_until", "last_error", "updated_at"]
            )
            transaction.on_commit(lambda: enqueue_delivery(pk), robust=True)
            return 1
        message = f"worker lost the attempt (after {delivery.attempts} attempt(s))"
        delivery.status, delivery.last_error, delivery.claimed_until = Delivery.DEAD, message, None
        delivery.save(update_fields=["status", "last_error", "claimed_until", "updated_at"])
        _dead(delivery, message)
        return 0


@transaction.atomic
def delivery_replay(*, user: User, delivery: Delivery) -> Delivery:
    """A dead delivery is sent again, with its stored inputs and the same idempotency key, and a
    fresh count of attempts. Its workflow step has already taken its onFailure path; a replay
    does not reopen it (the result is kept on the delivery)."""
    updated = (
        Delivery.objects.filter(pk=delivery.pk, status=Delivery.DEAD)
        .filter(Q(render_error=""))
        .update(
            status=Delivery.PENDING,
            attempts=0,
            next_attempt_at=now_ms(),
            replays=F("replays") + 1,
            claimed_until=None,
        )
    )
    if not updated:
        reason = "its inputs did not render" if delivery.render_error else f"it is {delivery.status}"
        raise InvalidState(f"only a dead delivery can be replayed; {reason}")
    record(
        tenant_id=delivery.tenant_id, actor=str(user.id), action="connector:replayed",
        resource=f"connectors/deliveries/{delivery.pk}",
        changes={"connector": delivery.connector, "action": delivery.action},
    )  # fmt: skip
    transaction.on_commit(lambda: enqueue_delivery(delivery.pk), robust=True)
    delivery.refresh_from_db()
    return delivery
