from celery import shared_task
from django.core.cache import cache

from casemgmt.tenancy.background import system_task


@shared_task(name="casemgmt.ops.ping", ignore_result=True)
@system_task("touches no table")
def ping(token: str) -> None:
    """Proves the worker path end to end: the worker writes what the caller can read back."""
    cache.set(f"ping:{token}", "pong", timeout=300)
