from django.apps import AppConfig

from orchestrator.definitions import hooks


class RunsConfig(AppConfig):
    name = "orchestrator.runs"
    label = "orch_runs"

    def ready(self) -> None:
        # App loading order: pools and state import models, which cannot load before the registry is ready.
        from orchestrator.runs import pools, state

        # Definitions sits below runs: a saved DAG or pool reaches the runs waiting for it through these.
        hooks.on_dag_saved(lambda dag_id: state.dag_admit_if_waiting(dag_id=dag_id))
        hooks.on_pool_saved(lambda name: pools.pool_wake(pool=name))
