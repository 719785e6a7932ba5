"""`dag` steps: run an orchestrator DAG (or a single task) and wait for it.

Step fields: `dagId` or `taskId` (one of them), `parameters` (an object, template expressions
allowed, rendered from the case when the run is scheduled), `timeoutSeconds` (past it the run is
cancelled and the step fails), `onFailure` (`fail_case` default, `skip`, `escalate`). The step's
result is `{runId, status, tasks: [{taskId, status}]}`. The tenant's `orchestrator` connector
configuration says where the orchestrator is (casemgmt/dags holds the machinery).
"""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING, Any

from django.db import transaction

from casemgmt.connectors.inputs import template_problems
from casemgmt.dags import queue, services
from casemgmt.workflows.steps import register

if TYPE_CHECKING:
    from casemgmt.cases.models import Case
    from casemgmt.workflows.models import CaseStep

ON_FAILURE = ("fail_case", "fail", "skip", "escalate")
MAX_TIMEOUT_SECONDS = 30 * 24 * 3600


def _id_problem(value: Any) -> bool:
    return not (isinstance(value, str) and 0 < len(value) <= 100)


class DagStep:
    type = "dag"

    def check(self, step: dict[str, Any], *, field: str, tenant_id: Any) -> list[dict[str, str]]:
        errors: list[dict[str, str]] = []
        has_dag, has_task = "dagId" in step, "taskId" in step
        if has_dag == has_task:
            errors.append({"field": f"{field}.dagId", "error": "give exactly one of dagId and taskId"})
        elif _id_problem(step["dagId"] if has_dag else step["taskId"]):
            name = "dagId" if has_dag else "taskId"
            errors.append({"field": f"{field}.{name}", "error": "must be a non-empty id"})
        parameters = step.get("parameters", {})
        if not isinstance(parameters, dict):
            errors.append({"field": f"{field}.parameters", "error": "must be an object"})
        else:
            errors += template_problems(parameters, f"{field}.parameters")
        timeout = step.get("timeoutSeconds")
        if timeout is not None and (isinstance(timeout, bool) or not isinstance(timeout, int)
                                    or not 1 <= timeout <= MAX_TIMEOUT_SECONDS):  # fmt: skip
            errors.append({"field": f"{field}.timeoutSeconds",
                           "error": f"must be an integer from 1 to {MAX_TIMEOUT_SECONDS}"})  # fmt: skip
        if step.get("onFailure", "fail_case") not in ON_FAILURE:
            errors.append({"field": f"{field}.onFailure", "error": "must be fail_case, skip or escalate"})
        return errors

    def activate(self, *, row: CaseStep, step: dict[str, Any], case: Case, actor: str) -> None:
        # The orchestrator is outside work: a worker schedules the run once this transaction commits.
        dag_run_id = str(services.dag_run_create(row=row, step=step).pk)
        transaction.on_commit(lambda: queue.enqueue_schedule(dag_run_id))

    def halt(self, *, case: Case) -> None:
        """The case was closed or cancelled: its unfinished runs are cancelled after commit."""
        for dag_run_id in services.dag_runs_halted(case=case):
            transaction.on_commit(partial(queue.enqueue_cancel, dag_run_id))


register(DagStep())
