"""Saved reports, running them, and questions answered by the language model.

Every query, saved or generated, passes `check_query` before it runs, and runs through
`run_readonly`; a saved query is checked again at each run, so a tightened checker applies to old
reports too.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from django.db import transaction
from django.utils import timezone

from casemgmt.audit.services import record
from casemgmt.prompts.llm import LLMBadReply, LLMNotConfigured, LLMTransient, chat_completion, llm_configured
from casemgmt.reports.models import Report
from casemgmt.reports.sandbox import QueryResult, run_readonly
from casemgmt.reports.sqlcheck import ALLOWED_CALLS, check_query, schema_lines
from shared.api.errors import ApplicationError, NotConfigured, NotReady

if TYPE_CHECKING:
    from casemgmt.accounts.models import User


@dataclass(frozen=True)
class Run:
    report: Report
    executed_at: datetime
    result: QueryResult


@dataclass(frozen=True)
class Answer:
    question: str
    query: str
    result: QueryResult


# --- saved reports ----------------------------------------------------------------------------


@transaction.atomic
def report_create(*, user: User, name: str, query: str) -> Report:
    check_query(query)  # 400 validation_error before anything is stored
    report = Report.objects.create(tenant_id=user.member_tenant_id, name=name, query=query, created_by=user)
    _audit(user, "report:created", report, {"name": name, "query": query})
    return report


@transaction.atomic
def report_update(*, user: User, report: Report, name: str, query: str) -> Report:
    check_query(query)
    report.name, report.query = name, query
    report.save(update_fields=["name", "query", "updated_at"])
    _audit(user, "report:updated", report, {"name": name, "query": query})
    return report


@transaction.atomic
def report_delete(*, user: User, report: Report) -> None:
    _audit(user, "report:deleted", report, {"name": report.name})
    report.delete()


def report_run(*, user: User, report: Report) -> Run:
    executed_at = timezone.now()
    result = run_readonly(
        tenant_id=user.member_tenant_id, sql=check_query(report.query), teams=user.rls_teams
    )
    with transaction.atomic():
        _audit(user, "report:run", report, {"rowCount": len(result.rows)})
    return Run(report=report, executed_at=executed_at, result=result)


def _audit(user: User, action: str, report: Report, changes: dict[str, Any]) -> None:
    record(
        tenant_id=user.member_tenant_id,
        actor=str(user.id),
        action=action,
        resource=f"reports/{report.id}",
        changes=changes,
    )


# --- questions --------------------------------------------------------------------------------

SYSTEM_PROMPT = """You write one PostgreSQL SELECT statement that answers the user's question.
The only tables are these two views (column name and type):
{schema}
`cases.status` is active, closed or cancelled; `cases.data` is the case's JSON data (use ->> to read
a field); `tasks.case_id` joins `cases.id`; `tasks.status` is active or completed.
Rules: exactly one SELECT (WITH is allowed, RECURSIVE is not), no semicolon, no comments, only
these views and their columns, and only these functions: {functions}.
Answer with the SQL statement only: no explanation and no code fences."""

FENCE = re.compile(r"```(?:sql)?\s*(.*?)```", re.DOTALL | re.IGNORECASE)


def report_ask(*, user: User, question: str) -> Answer:
    """503 not_configured without a model; a generated query that is refused, fails or times out
    is a 400 whose details carry that query."""
    if not llm_configured():
        raise NotConfigured("No language model is configured for questions.", code="not_configured")
    generated = _generate_sql(question)
    try:
        query = check_query(generated)
        result = run_readonly(tenant_id=user.member_tenant_id, sql=query, teams=user.rls_teams)
    except ApplicationError as exc:
        exc.extra = {**exc.extra, "query": generated}
        raise
    with transaction.atomic():
        record(
            tenant_id=user.member_tenant_id,
            actor=str(user.id),
            action="report:asked",
            resource="reports/ask",
            changes={"question": question, "query": query, "rowCount": len(result.rows)},
        )
    return Answer(question=question, query=query, result=result)


def _generate_sql(question: str) -> str:
    functions = ", ".join(sorted({call.split("(")[0].split(" ")[0] for call in ALLOWED_CALLS}))
    system = SYSTEM_PROMPT.format(schema="\n".join(schema_lines()), functions=functions)
    try:
        reply = chat_completion(
            messages=[{"role": "system", "content": system}, {"role": "user", "content": question}],
            temperature=0,
        )
    except LLMNotConfigured as exc:
        raise NotConfigured(str(exc), code="not_configured") from None
    except (LLMTransient, LLMBadReply) as exc:
        raise NotReady(f"The language model did not answer: {exc}", code="llm_unavailable") from None
    fenced = FENCE.search(reply.content)
    return (fenced.group(1) if fenced else reply.content).strip()
