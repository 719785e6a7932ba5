"""`dag` step executions: schedule on the orchestrator, wait, resolve on callback or poll.

Every write is guarded by the DagRun's status (conditional UPDATE or a row lock) and by the step
finishing functions, which do nothing unless the step is still active: a duplicated task, a
replayed callback or a poll racing a callback changes nothing the second time.
"""

from __future__ import annotations

import json
import logging
from datetime import timedelta
from functools import partial
from typing import TYPE_CHECKING, Any
from uuid import UUID

from django.conf import settings
from django.db import transaction
from django.db.models import Q

from casemgmt.connectors.base import ConnectorError
from casemgmt.connectors.inputs import render_value
from casemgmt.connectors.selectors import connector_config_values
from casemgmt.dags import client, queue
from casemgmt.dags.models import DagCallback, DagRun
from casemgmt.templating import TemplateError
from casemgmt.workflows.definitions import step_definition
from casemgmt.workflows.engine import template_context
from casemgmt.workflows.models import CaseStep
from casemgmt.workflows.services.steps import step_fail, step_succeed
from shared import signing
from shared.api import errors
from shared.api.time import now_ms
from shared.crypto import UndecryptableSecret

if TYPE_CHECKING:
    from casemgmt.cases.models import Case

logger = logging.getLogger(__name__)
CONNECTOR = "orchestrator"


def run_name(dag_run: DagRun) -> str:
    return f"case-{dag_run.id.hex}"


def dag_run_create(*, row: CaseStep, step: dict[str, Any]) -> DagRun:
    """Inside the activating transaction: the worker schedules the run after commit."""
    now = now_ms()
    timeout = step.get("timeoutSeconds")
    return DagRun.objects.create(
        tenant_id=row.tenant_id, step=row, created_at=now,
        poll_after=now + timedelta(seconds=settings.DAG_POLL_AFTER_SECONDS),
        deadline=now + timedelta(seconds=timeout) if timeout else None,
    )  # fmt: skip


def _config(tenant_id: Any) -> dict[str, Any]:
    try:
        config = connector_config_values(tenant_id=tenant_id, key=CONNECTOR)
    except UndecryptableSecret as exc:
        raise ConnectorError("not_configured", str(exc)) from exc
    if not config:
        raise ConnectorError("not_configured", "the orchestrator connector is not configured for this tenant")
    return config


def _parameters(step: dict[str, Any], context: dict[str, Any]) -> dict[str, str]:
    """The orchestrator takes string parameters: rendered values that are not strings are sent as
    JSON text."""
    rendered = render_value(step.get("parameters") or {}, context, "parameters")
    return {k: v if isinstance(v, str) else json.dumps(v) for k, v in rendered.items()}


def dag_run_schedule(*, dag_run_id: UUID | str) -> None:
    """Registers (or reuses) the callback webhook, then schedules the run with the parameters
    rendered from the case as it is now. A transient failure leaves the row `scheduling` for the
    poll to try again; anything else fails the step."""
    dag_run = (
        DagRun.objects.filter(pk=dag_run_id, status=DagRun.SCHEDULING).select_related("step__case").first()
    )
    if dag_run is None:
        return
    case = dag_run.step.case
    step = step_definition(case, dag_run.step.step_id)
    try:
        config = _config(dag_run.tenant_id)
        parameters = _parameters(step, {**template_context(case), "case_id": str(case.id)})
        client.webhook_ensure(config, dag_run.tenant_id)
        client.run_schedule(config, step=step, run_id=run_name(dag_run), parameters=parameters)
    except ConnectorError as exc:
        if exc.transient:
            logger.warning("dag run %s: scheduling failed (%s); the poll retries", dag_run.pk, exc.message)
            return
        _fail(dag_run, f"{exc.code}: {exc.message}", result=None)
        return
    except TemplateError as exc:
        _fail(dag_run, f"parameters: {exc}", result=None)
        return
    DagRun.objects.filter(pk=dag_run.pk, status=DagRun.SCHEDULING).update(
        status=DagRun.WAITING, run_id=run_name(dag_run)
    )


def step_result(run: dict[str, Any]) -> dict[str, Any]:
    tasks = [{"taskId": t.get("task_id"), "status": t.get("status")} for t in run.get("tasks") or []]
    return {"runId": run.get("run_id"), "status": run.get("status"), "tasks": tasks}


def dag_run_resolve(*, dag_run_id: UUID | str) -> str | None:
    """Asks the orchestrator for the run; a finished run finishes the step (completed: the
    workflow goes on; failed or cancelled: the step's onFailure). Past the step's timeoutSeconds
    an unfinished run is cancelled and the step fails. Returns the run's status, or None."""
    dag_run = DagRun.objects.filter(pk=dag_run_id, status=DagRun.WAITING).first()
    if dag_run is None:
        return None
    try:
        config = _config(dag_run.tenant_id)
        run = client.run_get(config, dag_run.run_id)
    except ConnectorError as exc:
        logger.warning("dag run %s: status unknown (%s); polled again later", dag_run.run_id, exc.message)
        _poll_later(dag_run)
        return None
    status = run.get("status")
    if status in client.TERMINAL:
        _finish(dag_run, step_result(run))
    elif dag_run.deadline and dag_run.deadline <= now_ms():
        _cancel_quietly(config, dag_run.run_id)
        _fail(dag_run, f"timeout: run {dag_run.run_id} still {status}", result=step_result(run))
    else:
        _poll_later(dag_run)
    return status


def _poll_later(dag_run: DagRun) -> None:
    poll_after = now_ms() + timedelta(seconds=settings.DAG_POLL_INTERVAL_SECONDS)
    if dag_run.deadline:
        poll_after = min(poll_after, dag_run.deadline)
    DagRun.objects.filter(pk=dag_run.pk, status=DagRun.WAITING).update(poll_after=poll_after)


@transaction.atomic
def _finish(dag_run: DagRun, result: dict[str, Any]) -> None:
    if result["status"] != "completed":
        _fail(dag_run, f"run {dag_run.run_id} {result['status']}", result=result)
        return
    if (
        DagRun.objects.filter(pk=dag_run.pk)
        .exclude(status=DagRun.DONE)
        .update(status=DagRun.DONE, result=result)
    ):
        step_succeed(step_pk=dag_run.step_id, result=result)


@transaction.atomic
def _fail(dag_run: DagRun, error: str, *, result: dict[str, Any] | None) -> None:
    if (
        not DagRun.objects.filter(pk=dag_run.pk)
        .exclude(status=DagRun.DONE)
        .update(status=DagRun.DONE, result=result)
    ):
        return
    # The step keeps the run's outcome even when it fails (an escalated task shows it).
    CaseStep.objects.filter(pk=dag_run.step_id, status=CaseStep.ACTIVE).update(result=result)
    step_fail(step_pk=dag_run.step_id, error=error)


def _cancel_quietly(config: dict[str, Any], run_id: str) -> None:
    try:
        client.run_cancel(config, run_id)
    except ConnectorError as exc:
        logger.warning("dag run %s: cancel failed (%s)", run_id, exc.message)


def dag_run_cancel(*, dag_run_id: UUID | str) -> None:
    """The case was closed or cancelled: the run is cancelled on the orchestrator."""
    dag_run = DagRun.objects.filter(pk=dag_run_id).exclude(run_id="").first()
    if dag_run is None:
        return
    try:
        _cancel_quietly(_config(dag_run.tenant_id), dag_run.run_id)
    except ConnectorError as exc:
        logger.warning("dag run %s: cancel failed (%s)", dag_run.run_id, exc.message)


def dag_runs_halted(*, case: Case) -> list[str]:
    """Inside the halting transaction: the case's unfinished runs, marked done (no callback or
    poll may touch them again); their ids are returned for cancelling after commit."""
    runs = DagRun.objects.filter(step__case=case).exclude(status=DagRun.DONE)
    ids = [str(pk) for pk in runs.values_list("pk", flat=True)]
    DagRun.objects.filter(pk__in=ids).update(status=DagRun.DONE)
    return ids


def dag_runs_due() -> tuple[list[str], list[str]]:
    """For the periodic poll: (runs still `scheduling` after the retry delay, waiting runs whose
    callback is overdue or whose deadline passed)."""
    now = now_ms()
    retry_before = now - timedelta(seconds=settings.DAG_POLL_INTERVAL_SECONDS)
    scheduling = DagRun.objects.filter(status=DagRun.SCHEDULING, created_at__lte=retry_before)
    waiting = DagRun.objects.filter(Q(poll_after__lte=now) | Q(deadline__lte=now), status=DagRun.WAITING)
    return (
        [str(pk) for pk in scheduling.values_list("pk", flat=True)[:500]],
        [str(pk) for pk in waiting.values_list("pk", flat=True)[:500]],
    )


# --- callbacks ------------------------------------------------------------------------------------


def signature(secret: str, timestamp: str, body: bytes) -> str:
    """`sha256=` + HMAC-SHA256 of `<timestamp>.<body>`: the timestamp is signed too, so an old
    callback cannot be sent again under a fresh timestamp."""
    return signing.sha256_sign(secret, signing.timestamped(timestamp, body))


def dag_callback_accept(*, tenant_id: UUID, timestamp: str, sig: str, body: bytes) -> list[str]:
    """Checks a callback, queues the resolve of each DagRun it concerns once recorded, and returns
    their ids (empty for a replay or a run this tenant does not know). Raises NotAuthenticated for a bad signature or a timestamp outside the
    window (older or newer than DAG_CALLBACK_WINDOW_SECONDS)."""
    try:
        config = _config(tenant_id)
    except ConnectorError:
        raise errors.NotFound("No orchestrator is configured for this tenant.") from None
    if not signing.sha256_verify(config["webhookSecret"], signing.timestamped(timestamp, body), sig):
        raise errors.NotAuthenticated("Invalid callback signature.")
    if not signing.timestamp_fresh(timestamp, settings.DAG_CALLBACK_WINDOW_SECONDS):
        raise errors.NotAuthenticated("Callback timestamp outside the accepted window.")
    return _record_callback(tenant_id=tenant_id, sig=sig, body=body)


@transaction.atomic
def _record_callback(*, tenant_id: UUID, sig: str, body: bytes) -> list[str]:
    now = now_ms()
    DagCallback.objects.filter(
        received_at__lt=now - timedelta(seconds=2 * settings.DAG_CALLBACK_WINDOW_SECONDS)
    ).delete()
    _, created = DagCallback.objects.get_or_create(signature=sig, defaults={"received_at": now})
    if not created:
        return []
    try:
        run_id = (json.loads(body).get("data") or {}).get("run_id")
    except (ValueError, AttributeError):
        return []
    if not isinstance(run_id, str):
        return []
    waiting = DagRun.objects.filter(tenant_id=tenant_id, run_id=run_id, status=DagRun.WAITING)
    dag_run_ids = [str(pk) for pk in waiting.values_list("pk", flat=True)]
    for dag_run_id in dag_run_ids:  # a worker asks the orchestrator for the outcome
        transaction.on_commit(partial(queue.enqueue_resolve, dag_run_id))
    return dag_run_ids
