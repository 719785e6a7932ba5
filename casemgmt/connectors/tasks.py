"""Celery tasks of the connectors app: ids in, idempotent (the outbox claim guards every send)."""

from __future__ import annotations

from celery import shared_task

from casemgmt.connectors import delivery


@shared_task(name=delivery.SEND_TASK, ignore_result=True)
def send_delivery(delivery_id: str) -> None:
    delivery.delivery_send(delivery_id=delivery_id)


@shared_task(name="casemgmt.connectors.sweep_deliveries", ignore_result=True)
def sweep_deliveries() -> int:
    return delivery.deliveries_sweep()
