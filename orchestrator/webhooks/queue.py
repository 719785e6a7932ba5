"""Sends the webhooks app's Celery jobs by task name. `tasks.py` registers the tasks under these
names and imports the services and the delivery module; those send through this module, which
imports neither, so nothing imports the tasks module."""

from __future__ import annotations

import logging

from celery import current_app

logger = logging.getLogger(__name__)
DELIVER_TASK = "orchestrator.webhooks.deliver"
SWEEP_TASK = "orchestrator.webhooks.webhooks_sweep"


def enqueue_deliveries(ids: list[str], countdown: float = 0) -> None:
    for delivery_id in ids:
        try:
            current_app.send_task(DELIVER_TASK, args=[delivery_id], countdown=countdown or None)
        except Exception:  # noqa: BLE001 - broker down (any kombu or redis error): the sweep re-sends due deliveries later
            logger.warning("could not queue webhook delivery %s; the sweep will retry", delivery_id)
