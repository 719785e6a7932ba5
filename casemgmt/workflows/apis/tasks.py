"""Human task endpoints (spec "Tasks"; CONTRACT "Tasks")."""

from __future__ import annotations

from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from casemgmt.workflows.access import task_get_readable, task_read_scope
from casemgmt.workflows.apis.docs import DraftOutput, FullTaskOutput, InboxOutput
from casemgmt.workflows.selectors import draft_record, task_detail, task_get, task_inbox
from casemgmt.workflows.services import tasks as services
from shared.api.pagination import get_page, page_links


def _full(user, row) -> Response:
    return Response(task_detail(task_get(user=user, case_id=row.case_id, step_id=row.step_id), full=True))


class TaskInboxApi(APIView):
    # tasks:read, or tasks:claim / tasks:complete (which see the same inbox: the tasks they may act on)
    required = {"GET": ""}
    OutputSerializer = InboxOutput

    def get(self, request):
        task_read_scope(user=request.user)
        page = get_page(request.query_params, default_limit=25, max_limit=100)
        tasks = task_inbox(user=request.user, params=request.query_params)
        total = tasks.count()
        rows = tasks[page.offset : page.offset + page.limit]
        next_url, _ = page_links(request, page, total)
        return Response({"data": [task_detail(row) for row in rows], "total": total, "next": next_url})


class TaskDetailApi(APIView):
    # tasks:read for any task; tasks:claim / tasks:complete for the tasks the caller may act on
    required = {"GET": ""}
    OutputSerializer = FullTaskOutput

    def get(self, request, case_id, step_id: str):
        row = task_get_readable(user=request.user, case_id=case_id, step_id=step_id)
        return Response(task_detail(row, full=True))


class TaskClaimApi(APIView):
    required = {"POST": "tasks:claim"}
    OutputSerializer = FullTaskOutput

    def post(self, request, case_id, step_id: str):
        row = services.task_claim(user=request.user, case_id=case_id, step_id=step_id)
        return _full(request.user, row)


class TaskCompleteApi(APIView):
    required = {"POST": "tasks:complete"}
    OutputSerializer = FullTaskOutput

    class InputSerializer(serializers.Serializer):
        data = serializers.DictField(required=False, default=dict)
        outcome = serializers.CharField(required=False, allow_null=True, default=None, max_length=200)

    def post(self, request, case_id, step_id: str):
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        row = services.task_complete(
            user=request.user, case_id=case_id, step_id=step_id, **serializer.validated_data
        )
        return _full(request.user, row)


class TaskDraftApi(APIView):
    required = {"POST": "tasks:complete"}
    OutputSerializer = DraftOutput

    class InputSerializer(serializers.Serializer):
        data = serializers.DictField()

    def post(self, request, case_id, step_id: str):
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        row = services.task_save_draft(
            user=request.user, case_id=case_id, step_id=step_id, data=serializer.validated_data["data"]
        )
        return Response(draft_record(row))


class TaskReassignApi(APIView):
    required = {"POST": "tasks:complete"}
    OutputSerializer = FullTaskOutput

    class InputSerializer(serializers.Serializer):
        assignTo = serializers.UUIDField()

    def post(self, request, case_id, step_id: str):
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        row = services.task_reassign(
            user=request.user,
            case_id=case_id,
            step_id=step_id,
            assign_to=serializer.validated_data["assignTo"],
        )
        return _full(request.user, row)


class TaskEscalateApi(APIView):
    required = {"POST": "tasks:complete"}
    OutputSerializer = FullTaskOutput

    class InputSerializer(serializers.Serializer):
        reason = serializers.CharField(max_length=2000)
        escalateTo = serializers.UUIDField(required=False, allow_null=True, default=None)

    def post(self, request, case_id, step_id: str):
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        row = services.task_escalate(
            user=request.user,
            case_id=case_id,
            step_id=step_id,
            reason=data["reason"],
            escalate_to=data["escalateTo"],
        )
        return _full(request.user, row)
