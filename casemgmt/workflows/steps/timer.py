"""`timer` steps: wait a duration (`after`, ISO 8601, e.g. `PT48H`) from activation, or until a time
(`until`, a template over the case giving an ISO 8601 time). The due-steps sweep (Celery beat)
completes the step once the time has come, with the result `{firedAt}`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from casemgmt.templating import TemplateError, check_template, render
from casemgmt.workflows.durations import parse_duration, parse_time
from casemgmt.workflows.engine import template_context
from casemgmt.workflows.steps import register
from shared.api.time import now_ms

if TYPE_CHECKING:
    from casemgmt.cases.models import Case
    from casemgmt.workflows.models import CaseStep

ON_FAILURE = ("fail_case", "fail", "skip", "escalate")


class TimerStep:
    type = "timer"

    def check(self, step: dict[str, Any], *, field: str, tenant_id: Any) -> list[dict[str, str]]:
        after, until = step.get("after"), step.get("until")
        if (after is None) == (until is None):
            return [{"field": field, "error": "a timer step takes exactly one of after and until"}]
        errors: list[dict[str, str]] = []
        if after is not None:
            try:
                parse_duration(after)
            except ValueError as exc:
                errors.append({"field": f"{field}.after", "error": str(exc)})
        elif not isinstance(until, str):
            errors.append({"field": f"{field}.until", "error": "must be a template giving an ISO 8601 time"})
        else:
            try:
                check_template(str(until))
            except TemplateError as exc:
                errors.append({"field": f"{field}.until", "error": f"does not parse: {exc}"})
        if step.get("onFailure", "fail_case") not in ON_FAILURE:
            errors.append({"field": f"{field}.onFailure", "error": "must be fail_case, skip or escalate"})
        return errors

    def activate(self, *, row: CaseStep, step: dict[str, Any], case: Case, actor: str) -> None:
        start = row.activated_at or now_ms()
        try:
            if step.get("after") is not None:
                row.fire_at = start + parse_duration(step["after"])
            else:
                row.fire_at = parse_time(render(step["until"], template_context(case)))
        except (TemplateError, ValueError) as exc:
            # Failing here would re-enter the engine mid-activation: the sweep fails the step (as
            # its onFailure says) on its next pass instead.
            row.fire_at, row.error = start, f"until: {exc}"[:2000]
        row.save(update_fields=["fire_at", "error"])


register(TimerStep())
