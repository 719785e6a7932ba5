"""`case` steps (sub-cases): create a child case of `caseTypeKey` with `data` (templates over the
parent's data); the step completes when the child is closed (result `{caseId, caseNumber, outcome}`)
and fails, as its `onFailure` says, when the child is cancelled (`casemgmt.workflows.services.family`)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from django.db import transaction

from casemgmt.accounts.models import User
from casemgmt.cases.models import CaseType
from casemgmt.cases.services import case_create
from casemgmt.templating import TemplateError, check_template, render, to_plain
from casemgmt.templating.renderer import walk
from casemgmt.workflows.engine import template_context
from casemgmt.workflows.steps import register
from shared.api.errors import ApplicationError
from shared.api.time import now_ms

if TYPE_CHECKING:
    from casemgmt.cases.models import Case
    from casemgmt.workflows.models import CaseStep

ON_FAILURE = ("fail_case", "fail", "skip", "escalate")
# A value that is one expression and nothing else ("{{case_data.amount}}") keeps its JSON type; any
# other string is rendered as text.
_WHOLE_PATH = re.compile(r"^\{\{\s*([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z0-9_]+)*)\s*\}\}$")


def child_data(template: Any, context: dict[str, Any]) -> Any:
    """The child's data: every string inside `template` rendered over the parent's context."""
    if isinstance(template, str):
        whole = _WHOLE_PATH.match(template)
        if whole:
            return walk(to_plain(context), whole.group(1).split("."))
        return render(template, context) if "{{" in template else template
    if isinstance(template, dict):
        return {key: child_data(value, context) for key, value in template.items()}
    if isinstance(template, list):
        return [child_data(value, context) for value in template]
    return template


def _template_errors(value: Any, path: str) -> list[dict[str, str]]:
    if isinstance(value, str):
        try:
            check_template(value)
        except TemplateError as exc:
            return [{"field": path, "error": f"does not parse: {exc}"}]
        return []
    if isinstance(value, dict):
        return [e for key, item in value.items() for e in _template_errors(item, f"{path}.{key}")]
    if isinstance(value, list):
        return [e for index, item in enumerate(value) for e in _template_errors(item, f"{path}[{index}]")]
    return []


def _creator(case: Case, actor: str) -> User | None:
    """Decision: the child is created by whoever caused the activation (the user completing the step
    before it); when the system did (a timer, a message), by the parent case's creator."""
    user = User.objects.filter(tenant_id=case.tenant_id, id=actor).first() if _is_uuid(actor) else None
    if user is not None or case.created_by_id is None:
        return user
    return User.objects.filter(tenant_id=case.tenant_id, id=case.created_by_id).first()


def _is_uuid(value: str) -> bool:
    return bool(re.fullmatch(r"[0-9a-fA-F-]{32,36}", value or ""))


class SubCaseStep:
    type = "case"

    def check(self, step: dict[str, Any], *, field: str, tenant_id: Any) -> list[dict[str, str]]:
        errors: list[dict[str, str]] = []
        key = step.get("caseTypeKey")
        if not isinstance(key, str) or not key:
            errors.append({"field": f"{field}.caseTypeKey", "error": "must be a case type key"})
        elif not CaseType.objects.filter(tenant_id=tenant_id, key=key).exists():
            errors.append({"field": f"{field}.caseTypeKey", "error": f"no case type with key {key!r}"})
        data = step.get("data", {})
        if not isinstance(data, dict):
            errors.append({"field": f"{field}.data", "error": "must be an object of templates"})
        else:
            errors += _template_errors(data, f"{field}.data")
        if step.get("onFailure", "fail_case") not in ON_FAILURE:
            errors.append({"field": f"{field}.onFailure", "error": "must be fail_case, skip or escalate"})
        return errors

    def activate(self, *, row: CaseStep, step: dict[str, Any], case: Case, actor: str) -> None:
        try:
            # A savepoint: a child that cannot be created (its data fails its schema) fails this
            # step, not the request or job that activated it.
            with transaction.atomic():
                child = self._create_child(step=step, case=case, actor=actor)
        except (ApplicationError, TemplateError) as exc:
            # Failing here would re-enter the engine mid-activation: the due-steps sweep fails the
            # step (as its onFailure says) on its next pass instead.
            row.fire_at, row.error = now_ms(), f"child case not created: {exc}"[:2000]
            row.save(update_fields=["fire_at", "error"])
            return
        row.child_case = child
        row.save(update_fields=["child_case"])

    def _create_child(self, *, step: dict[str, Any], case: Case, actor: str) -> Case:
        case_type = (
            CaseType.objects.filter(tenant_id=case.tenant_id, key=step["caseTypeKey"])
            .order_by("-version")
            .first()
        )
        creator = _creator(case, actor)
        if case_type is None or creator is None:
            raise ApplicationError("no case type or creator for the child case")
        data = child_data(step.get("data") or {}, template_context(case))
        if not isinstance(data, dict):
            raise ApplicationError("the child's data must render to an object")
        return case_create(user=creator, case_type=case_type, data=data)


register(SubCaseStep())
