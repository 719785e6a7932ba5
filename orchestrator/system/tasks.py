from celery import shared_task
from django.core.cache import cache

from orchestrator.system.services import recovery_sweep as recovery_sweep_run


@shared_task(name="orchestrator.system.ping", ignore_result=True)
def ping(token: str) -> None:
    """Proves the worker path end to end: the worker writes what the caller can read back."""
    cache.set(f"ping:{token}", "pong", timeout=300)


@shared_task(name="orchestrator.system.recovery_sweep", ignore_result=True)
def recovery_sweep() -> None:
    """Beat job, where a beat still runs: the same locked sweep the agents run themselves."""
    recovery_sweep_run(sweeper="beat")
