from celery import shared_task

from orchestrator.agents.services import agents_sweep


@shared_task(name="orchestrator.agents.sweep", ignore_result=True)
def sweep() -> None:
    agents_sweep()
