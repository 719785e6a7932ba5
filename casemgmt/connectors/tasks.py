"""Celery tasks of the connectors app: ids in, idempotent (the outbox claim guards every send)."""

from __future__ import annotations

from celery import shared_task

from casemgmt.connectors import delivery, queue
from casemgmt.connectors.models import Delivery
from casemgmt.tenancy.background import row_task, system_task


@shared_task(name=queue.SEND_TASK, ignore_result=True)
@row_task(Delivery)
def send_delivery(delivery_id: str) -> None:
    delivery.delivery_send(delivery_id=delivery_id)


@shared_task(name=queue.SWEEP_TASK, ignore_result=True)
@system_task("selects lost deliveries of every tenant; each is taken back in its own tenant")
def deliveries_sweep() -> int:
    return delivery.deliveries_sweep()
