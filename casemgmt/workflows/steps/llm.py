"""LLM steps (the workflow JSON step type `agent`, a public name that stays): render a prompt
template and ask the language model, in a Celery job."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from django.db import transaction

from casemgmt.prompts.selectors import prompt_template_get_or_none
from casemgmt.workflows.definitions import check_json_schema, prompt_reference
from casemgmt.workflows.queue import enqueue_llm_step
from casemgmt.workflows.steps import register

if TYPE_CHECKING:
    from casemgmt.cases.models import Case
    from casemgmt.workflows.models import CaseStep

# `onFailure`: fail_case (default), skip, escalate; `fail` is kept as an alias of fail_case for
# definitions published before the `fail_case` spelling was adopted.
ON_FAILURE = ("fail_case", "fail", "skip", "escalate")
RESPONSE_FORMATS = ("text", "json")


class LLMStep:
    type = "agent"

    def check(self, step: dict[str, Any], *, field: str, tenant_id: Any) -> list[dict[str, str]]:
        errors: list[dict[str, str]] = []
        name, version = prompt_reference(step)
        if not isinstance(name, str) or not name or (version is not None and not isinstance(version, int)):
            errors.append({"field": f"{field}.promptTemplate", "error": "must be a name or {name, version}"})
        elif prompt_template_get_or_none(tenant_id=tenant_id, name=name, version=version) is None:
            errors.append({"field": f"{field}.promptTemplate", "error": f"unknown prompt template {name!r}"})
        if step.get("outputKey") is not None and not (
            isinstance(step["outputKey"], str) and step["outputKey"]
        ):
            errors.append({"field": f"{field}.outputKey", "error": "must be a non-empty string"})
        if step.get("responseFormat", "text") not in RESPONSE_FORMATS:
            errors.append({"field": f"{field}.responseFormat", "error": "must be text or json"})
        if step.get("onFailure", "fail_case") not in ON_FAILURE:
            errors.append({"field": f"{field}.onFailure", "error": "must be fail_case, skip or escalate"})
        if "formSchema" in step:
            errors += check_json_schema(step["formSchema"], f"{field}.formSchema")
        return errors

    def activate(self, *, row: CaseStep, step: dict[str, Any], case: Case, actor: str) -> None:
        # The model call is outside work: it runs in a worker once this transaction commits.
        step_pk = row.pk
        transaction.on_commit(lambda: enqueue_llm_step(step_pk, attempt=1))


register(LLMStep())
