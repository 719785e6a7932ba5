from celery import shared_task


@shared_task(name="orchestrator.agents.sweep", ignore_result=True)
def sweep() -> None:
    """Beat job, where a beat still runs: the same locked sweep the agents run themselves."""
    # system -> agents (the system app reads agents' models and services): imported here so
    # the agents app never imports the system app at load time
    from orchestrator.system.services import recovery_sweep

    recovery_sweep(sweeper="beat")
