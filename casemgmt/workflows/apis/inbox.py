"""Human task endpoints: the inbox, one task, claim, complete, draft, reassign and escalate."""

from __future__ import annotations

import uuid
from typing import Any

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from casemgmt.accounts.models import User
from casemgmt.accounts.request import AuthenticatedRequest
from casemgmt.workflows.access import task_get_readable, task_read_scope
from casemgmt.workflows.definitions import step_definition
from casemgmt.workflows.models import CaseStep
from casemgmt.workflows.openapi import DraftOut, FullTaskOut, InboxPageOut
from casemgmt.workflows.selectors import INBOX_STATUSES, task_get, task_inbox
from casemgmt.workflows.services import bulk
from casemgmt.workflows.services import inbox as services
from shared.api.bulk import as_query, check_count, one_of_list_or_filter
from shared.api.errors import PermissionDenied
from shared.api.fields import StrictCharField, StrictSerializer
from shared.api.openapi import TIMESTAMP_OR_DATE, UUID, one_of, page_parameters, query
from shared.api.pagination import get_page, page_links
from shared.api.querying import QueryChoiceField, QuerySerializer, QueryTimestampField, QueryUUIDField
from shared.api.time import iso
from shared.auth.permissions import has_permission

# `sortBy` values: the API's spellings of the selector's sort keys.
INBOX_SORT_BY = {"dueDate": "due_date", "createdAt": "created_at", "caseType": "case_type"}


def _task_status(row: CaseStep) -> str:
    if row.status == CaseStep.COMPLETED:
        return "completed"
    if row.status != CaseStep.ACTIVE:
        return row.status  # not served by the task endpoints; truthful if ever shown
    return "claimed" if row.assigned_to_id else "unclaimed"


def draft_out(row: CaseStep) -> dict[str, Any] | None:
    if row.draft_saved_at is None:
        return None
    return {"data": row.draft, "savedAt": iso(row.draft_saved_at)}


def task_out(row: CaseStep, *, full: bool = False) -> dict[str, Any]:
    """An inbox item; `full` adds the case data and the submitted form data (task detail)."""
    case = row.case
    step = step_definition(case, row.step_id)
    out: dict[str, Any] = {
        "caseId": str(case.id),
        "stepId": row.step_id,
        "stepName": row.name,
        "caseType": case.case_type.key,
        "caseNumber": case.case_number,
        "caseSummary": {
            "caseNumber": case.case_number,
            "displayName": case.display_name,
            "status": case.status,
        },
        "status": _task_status(row),
        "createdAt": iso(row.activated_at),
        "dueAt": iso(row.due_at),
        "assignedTo": str(row.assigned_to_id) if row.assigned_to_id else None,
        "role": row.role or None,
        "candidateTeam": (
            {"id": str(row.candidate_team.id), "name": row.candidate_team.name}
            if row.candidate_team
            else None
        ),
        "formSchema": step.get("formSchema") or {"type": "object"},
        "outcomes": step.get("outcomes"),
        "escalated": row.escalated,
        "escalatedAt": iso(row.escalated_at),
        "escalationReason": row.escalation_reason or None,
        "escalatedTo": str(row.escalated_to_id) if row.escalated_to_id else None,
        "draft": draft_out(row),
        "outcome": row.outcome or None,
        "completedAt": iso(row.completed_at) if row.status == CaseStep.COMPLETED else None,
        "completedBy": str(row.completed_by_id) if row.completed_by_id else None,
    }
    if full:
        out["caseData"] = case.data
        out["data"] = row.result if row.status == CaseStep.COMPLETED else None
    return out


def _full(user: User, row: CaseStep) -> Response:
    """The task as the caller now sees it, re-read with its case after a write."""
    return Response(task_out(task_get(user=user, case_id=row.case_id, step_id=row.step_id), full=True))


class TaskInboxApi(APIView):
    # tasks:read, or tasks:claim / tasks:complete (which see the same inbox: the tasks they may act on)
    required = {"GET": ""}
    OutputSerializer = InboxPageOut

    class FilterSerializer(QuerySerializer):
        status = QueryChoiceField(
            choices=INBOX_STATUSES, message="status must be claimed, unclaimed or completed"
        )
        dueBefore = QueryTimestampField(source="due_before")  # noqa: N815 (the API's spellings)
        dueAfter = QueryTimestampField(source="due_after")  # noqa: N815
        caseId = QueryUUIDField(source="case_id")  # noqa: N815
        team = QueryUUIDField()
        candidate = QueryChoiceField(choices=("me",), message="candidate must be me")
        sortBy = QueryChoiceField(  # noqa: N815
            source="sort_by",
            choices=INBOX_SORT_BY,
            message="sortBy must be dueDate, createdAt or caseType",
            default="createdAt",
        )

        def validate_sortBy(self, value: str) -> str:  # noqa: N802
            return INBOX_SORT_BY[value]

    @extend_schema(
        parameters=[
            *page_parameters(),
            query("status", one_of("claimed", "unclaimed", "completed"), "default: open tasks"),
            query("dueBefore", TIMESTAMP_OR_DATE),
            query("dueAfter", TIMESTAMP_OR_DATE),
            query("caseId", UUID),
            query("team", UUID, "only tasks whose candidate team this is"),
            query("candidate", one_of("me"), "only open tasks the caller may claim"),
            query("sortBy", one_of(*INBOX_SORT_BY), "default createdAt"),
        ]
    )
    def get(self, request: AuthenticatedRequest) -> Response:
        task_read_scope(user=request.user)
        page = get_page(request.query_params, default_limit=25, max_limit=100)
        filters = self.FilterSerializer(data=request.query_params)
        filters.is_valid(raise_exception=True)
        tasks = task_inbox(user=request.user, **filters.validated_data)
        total = tasks.count()
        rows = tasks[page.offset : page.offset + page.limit]
        next_url, _ = page_links(request, page, total)
        return Response({"data": [task_out(row) for row in rows], "total": total, "next": next_url})


class TaskDetailApi(APIView):
    # tasks:read for any task; tasks:claim / tasks:complete for the tasks the caller may act on
    required = {"GET": ""}
    OutputSerializer = FullTaskOut

    def get(self, request: AuthenticatedRequest, case_id: uuid.UUID, step_id: str) -> Response:
        row = task_get_readable(user=request.user, case_id=case_id, step_id=step_id)
        return Response(task_out(row, full=True))


class TaskClaimApi(APIView):
    required = {"POST": "tasks:claim"}
    OutputSerializer = FullTaskOut

    def post(self, request: AuthenticatedRequest, case_id: uuid.UUID, step_id: str) -> Response:
        row = services.task_claim(user=request.user, case_id=case_id, step_id=step_id)
        return _full(request.user, row)


class TaskReleaseApi(APIView):
    # The holder, or a holder of tasks:assign (checked by the service).
    required = {"POST": ""}
    OutputSerializer = FullTaskOut

    def post(self, request: AuthenticatedRequest, case_id: uuid.UUID, step_id: str) -> Response:
        row = services.task_release(user=request.user, case_id=case_id, step_id=step_id)
        return _full(request.user, row)


class TaskCompleteApi(APIView):
    required = {"POST": "tasks:complete"}
    OutputSerializer = FullTaskOut

    class InputSerializer(serializers.Serializer):
        data = serializers.DictField(required=False, default=dict)  # type: ignore[assignment]  # a declared field: DRF's metaclass pops it from the class
        outcome = StrictCharField(required=False, allow_null=True, default=None, max_length=200)

    def post(self, request: AuthenticatedRequest, case_id: uuid.UUID, step_id: str) -> Response:
        body = self.InputSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        data = body.validated_data
        row = services.task_complete(
            user=request.user, case_id=case_id, step_id=step_id, data=data["data"], outcome=data["outcome"]
        )
        if (step_definition(row.case, row.step_id).get("routes") or {}).get(row.outcome):
            # A rework route made the step pending again: the answer is this completion as done.
            return Response(task_out(row, full=True))
        return _full(request.user, row)


class TaskDraftApi(APIView):
    required = {"POST": "tasks:complete"}
    OutputSerializer = DraftOut

    class InputSerializer(serializers.Serializer):
        data = serializers.DictField()  # type: ignore[assignment]  # a declared field: DRF's metaclass pops it from the class

    def post(self, request: AuthenticatedRequest, case_id: uuid.UUID, step_id: str) -> Response:
        body = self.InputSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        row = services.task_save_draft(
            user=request.user, case_id=case_id, step_id=step_id, data=body.validated_data["data"]
        )
        return Response(draft_out(row))


class TaskReassignApi(APIView):
    required = {"POST": "tasks:complete"}
    OutputSerializer = FullTaskOut

    class InputSerializer(serializers.Serializer):
        assignTo = serializers.UUIDField()

    def post(self, request: AuthenticatedRequest, case_id: uuid.UUID, step_id: str) -> Response:
        body = self.InputSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        row = services.task_reassign(
            user=request.user, case_id=case_id, step_id=step_id, assign_to=body.validated_data["assignTo"]
        )
        return _full(request.user, row)


class TaskEscalateApi(APIView):
    required = {"POST": "tasks:complete"}
    OutputSerializer = FullTaskOut

    class InputSerializer(serializers.Serializer):
        reason = StrictCharField(max_length=2000)
        escalateTo = serializers.UUIDField(required=False, allow_null=True, default=None)

    def post(self, request: AuthenticatedRequest, case_id: uuid.UUID, step_id: str) -> Response:
        body = self.InputSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        data = body.validated_data
        row = services.task_escalate(
            user=request.user,
            case_id=case_id,
            step_id=step_id,
            reason=data["reason"],
            escalate_to=data["escalateTo"],
        )
        return _full(request.user, row)


class TaskBulkApi(APIView):
    # Per action, what its single request needs (release: the holder or tasks:assign, per task).
    required = {"POST": ""}
    NEEDS = {"reassign": "tasks:complete", "escalate": "tasks:complete", "release": ""}

    class TaskRefIn(StrictSerializer):
        caseId = serializers.UUIDField()
        stepId = StrictCharField(max_length=100)

    class InputSerializer(StrictSerializer):
        action = serializers.ChoiceField(choices=bulk.TASK_ACTIONS)
        tasks = serializers.ListField(
            child=serializers.DictField(), required=False, allow_null=True, default=None
        )
        filter = serializers.DictField(required=False, allow_null=True, default=None)
        assignTo = serializers.UUIDField(required=False, allow_null=True, default=None)
        reason = StrictCharField(required=False, allow_blank=True, default="", max_length=2000)
        escalateTo = serializers.UUIDField(required=False, allow_null=True, default=None)

    @extend_schema(responses={200: OpenApiTypes.OBJECT})
    def post(self, request: AuthenticatedRequest) -> Response:
        body = self.InputSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        data = body.validated_data
        needed = self.NEEDS[data["action"]]
        if needed and not has_permission(request.user.get_permission_strings(), needed):
            raise PermissionDenied(f"Requires permission {needed}.")
        one_of_list_or_filter(data, "tasks")
        if data["filter"] is not None:
            filters = TaskInboxApi.FilterSerializer(data=as_query(data["filter"]))
            filters.is_valid(raise_exception=True)
            task_read_scope(user=request.user)  # the inbox's own permission check
            refs = bulk.tasks_matching(user=request.user, filters=filters.validated_data)
        else:
            check_count(len(data["tasks"]), "tasks")
            refs = [self._ref(item) for item in data["tasks"]]
        result = bulk.tasks_bulk(
            user=request.user,
            action=data["action"],
            tasks=refs,
            assign_to=data["assignTo"],
            reason=data["reason"],
            escalate_to=data["escalateTo"],
        )
        return Response(result)

    def _ref(self, item: dict[str, Any]) -> tuple[uuid.UUID, str]:
        ref = self.TaskRefIn(data=item)
        ref.is_valid(raise_exception=True)
        return ref.validated_data["caseId"], ref.validated_data["stepId"]
