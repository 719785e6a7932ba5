"""`connector` steps: one call of a connector action, through the outbound outbox.

Step fields: `connector` (key), `action`, `config` (the action's inputs, template expressions
allowed), `retries` (attempts after the first; default the server's CONNECTOR_RETRIES), `onFailure`
(`fail_case` default, `skip`, `escalate` to a human task). The step's result is the call's output
(`{statusCode, body}` unless the connector returns a smaller output).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from django.conf import settings

from casemgmt.connectors.delivery import delivery_create
from casemgmt.connectors.inputs import template_problems
from casemgmt.connectors.registry import connector_get
from casemgmt.workflows.engine import template_context
from casemgmt.workflows.steps import register

if TYPE_CHECKING:
    from casemgmt.cases.models import Case
    from casemgmt.workflows.models import CaseStep

ON_FAILURE = ("fail_case", "fail", "skip", "escalate")
MAX_RETRIES = 10


def _retries(step: dict[str, Any]) -> int:
    value = step.get("retries")
    return settings.CONNECTOR_RETRIES if value is None else int(value)


class ConnectorStep:
    type = "connector"

    def check(self, step: dict[str, Any], *, field: str, tenant_id: Any) -> list[dict[str, str]]:
        errors: list[dict[str, str]] = []
        connector = connector_get(step["connector"]) if isinstance(step.get("connector"), str) else None
        if connector is None or not connector.invocable:
            errors.append({"field": f"{field}.connector", "error": "must be the key of a connector"})
        elif not isinstance(step.get("action"), str) or step["action"] not in connector.actions:
            known = ", ".join(sorted(connector.actions))
            errors.append({"field": f"{field}.action", "error": f"must be one of: {known}"})
        config = step.get("config", {})
        if not isinstance(config, dict):
            errors.append({"field": f"{field}.config", "error": "must be an object of action inputs"})
        else:
            errors += template_problems(config, f"{field}.config")
        retries = step.get("retries")
        if retries is not None and (isinstance(retries, bool) or not isinstance(retries, int)
                                    or not 0 <= retries <= MAX_RETRIES):  # fmt: skip
            errors.append(
                {"field": f"{field}.retries", "error": f"must be an integer from 0 to {MAX_RETRIES}"}
            )
        if step.get("onFailure", "fail_case") not in ON_FAILURE:
            errors.append({"field": f"{field}.onFailure", "error": "must be fail_case, skip or escalate"})
        return errors

    def activate(self, *, row: CaseStep, step: dict[str, Any], case: Case, actor: str) -> None:
        # The outbox row is written in this (the activating) transaction; the call runs in a
        # worker after commit.
        context = {**template_context(case), "case_id": str(case.id)}
        delivery_create(
            case=case, connector_key=step["connector"], action=step["action"],
            raw_inputs=step.get("config") or {}, retries=_retries(step), template_context=context, step=row,
        )  # fmt: skip


register(ConnectorStep())
