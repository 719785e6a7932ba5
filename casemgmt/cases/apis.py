"""HTTP operations for case types and cases. Thin: parse, authorize, call one service or selector.

Output bodies are built by plain `*_out` functions (`case_out`...) rather than DRF output serializers:
they are on the hottest paths (create/read) and these dicts are the whole response shape anyway.
"""

from __future__ import annotations

import uuid
from typing import Any

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from casemgmt.accounts.request import AuthenticatedRequest
from casemgmt.cases import comments, openapi, selectors, services
from casemgmt.cases.jsondata import summary_of
from casemgmt.cases.models import Case, CaseComment, CaseType
from casemgmt.tenancy.throttling import SearchThrottle
from shared.api.bulk import BULK_MAX, as_query, check_count, one_of_list_or_filter
from shared.api.errors import PermissionDenied, ValidationFailed
from shared.api.fields import JsonObjectField, StrictCharField, StrictIntegerField, StrictSerializer
from shared.api.openapi import (
    BOOLEAN,
    NOT_BLANK,
    TEXT,
    TIMESTAMP_OR_DATE,
    UUID,
    errors_also,
    one_of,
    page_parameters,
    query,
)
from shared.api.pagination import get_page, list_body, next_link
from shared.api.querying import (
    QueryBooleanField,
    QueryChoiceField,
    QuerySerializer,
    QueryTextField,
    QueryTimestampField,
    QueryUUIDField,
)
from shared.api.time import iso
from shared.auth.permissions import has_permission

# `sortBy` values: the API's spellings of the selector's sort keys.
SORT_BY = {"createdAt": "created_at", "deadline": "deadline", "status": "status"}


def case_type_out(case_type: CaseType) -> dict[str, Any]:
    return {
        "id": str(case_type.id),
        "key": case_type.key,
        "version": case_type.version,
        "displayName": case_type.display_name,
        "description": case_type.description,
        "schema": case_type.schema,
        "prefix": case_type.prefix,
        "slaHours": case_type.sla_hours,
        "accessTeams": list(case_type.access_teams or []),
        "createdAt": iso(case_type.created_at),
    }


def case_out(case: Case) -> dict[str, Any]:
    return case_row_out(selectors.CaseRow.of(case))


def case_row_out(case: selectors.CaseRow) -> dict[str, Any]:
    return {
        "id": case.id,
        "caseNumber": case.case_number,
        "displayName": case.display_name,
        "caseTypeId": case.case_type_id,
        "caseTypeKey": case.case_type_key,
        "workflowVersionId": case.workflow_version_id,
        "status": case.status,
        "data": case.data,
        "version": case.version,
        "createdAt": case.created_at,
        "createdBy": case.created_by_id,
        "updatedAt": case.updated_at,
        "slaDeadline": case.sla_deadline,
        "closedAt": case.closed_at,
        "outcome": case.outcome or None,
        "statusReason": case.status_reason or None,
    }


def case_list_item_out(case: selectors.CaseRow, current_step: str | None) -> dict[str, Any]:
    item = case_row_out(case)
    del item["data"]  # list items omit data
    item.update(summary=summary_of(case.data), currentStep=current_step)
    return item


def case_step_out(step: selectors.StepRow) -> dict[str, Any]:
    out: dict[str, Any] = {
        "id": step.step_id,
        "name": step.name,
        "type": step.type,
        "status": step.status,
        "activatedAt": step.activated_at,
    }
    if step.completed_at is not None:  # completedAt is absent while the step is active
        out["completedAt"] = step.completed_at
    out["iteration"] = step.iteration
    if step.type == "timer" and step.fire_at is not None:  # when the timer fires (or fired)
        out["fireAt"] = step.fire_at
    if step.message:
        out["message"] = step.message
    if step.child_case_id:
        out["childCaseId"] = step.child_case_id
    # What the step produced (a task's form data, an agent's reply, a connector's response), and
    # for a task its outcome and who completed it; absent until there is something to show.
    if step.result is not None:
        out["result"] = step.result
    if step.outcome:
        out["outcome"] = step.outcome
    if step.completed_by:
        out["completedBy"] = step.completed_by
    if step.error:
        out["error"] = step.error
    return out


def case_detail_out(detail: selectors.CaseDetail) -> dict[str, Any]:
    """A case with its `workflow` object: {id, version, steps[]}, or None without a workflow."""
    body = case_row_out(detail.case)
    workflow_id = detail.case.workflow_version_id
    body["parentId"] = detail.family.get("parentId")
    body["children"] = detail.family.get("children", [])
    body["workflow"] = (
        {
            "id": str(workflow_id),
            "version": detail.workflow_version,
            "steps": [case_step_out(s) for s in detail.steps],
            "stepResults": {s.step_id: s.result for s in detail.steps if s.status == "completed"},
            "history": detail.family.get("history", []),
        }
        if workflow_id is not None
        else None
    )
    return body


def search_hit_out(hit: selectors.SearchHit) -> dict[str, Any]:
    return {
        "id": str(hit.id),
        "caseNumber": hit.case_number,
        "displayName": hit.display_name,
        "caseTypeId": str(hit.case_type_id),
        "relevance": hit.relevance,
        "excerpt": hit.excerpt,
    }


def dashboard_out(dashboard: selectors.Dashboard) -> dict[str, Any]:
    return {
        "totalActive": dashboard.by_status[Case.ACTIVE],
        "totalClosed": dashboard.by_status[Case.CLOSED],
        "avgResolutionTime": dashboard.avg_resolution_seconds,
        "slaComplianceRate": dashboard.sla_compliance_rate,
        "byStatus": dashboard.by_status,
        "byType": dashboard.by_type,
        "ageingByWeek": [
            {"week": week, "count": count} for week, count in enumerate(dashboard.active_by_age_in_weeks)
        ],
    }


def with_etag(response: Response, case: Case | selectors.CaseRow) -> Response:
    response["ETag"] = f'"{case.version}"'
    return response


def _require_object(value: Any, field: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise ValidationFailed(f"{field} must be a JSON object", field=field)
    return value


# --- case types -------------------------------------------------------------------------------


class CaseTypeListCreateApi(APIView):
    required = {"GET": "cases:read", "POST": "admin:case_types"}

    class InputSerializer(serializers.Serializer):
        # Strict: DRF's CharField would turn `"key": 5` into "5" and register a key nobody sent.
        key = StrictCharField(max_length=100)
        displayName = StrictCharField(max_length=200)
        description = StrictCharField(required=False, allow_blank=True, default="")
        schema = JsonObjectField()
        prefix = StrictCharField(required=False, max_length=8)
        slaHours = serializers.IntegerField(required=False, allow_null=True, min_value=1, max_value=24 * 365)
        accessTeams = serializers.ListField(
            child=serializers.UUIDField(), required=False, allow_null=True, default=None, max_length=100
        )

    class FilterSerializer(QuerySerializer):
        key = QueryTextField()
        latest = QueryBooleanField(default=False)

    @extend_schema(
        operation_id="case_types_list",
        responses=openapi.CaseTypeOut(many=True),
        parameters=[
            query("key", TEXT, "only versions of this case type key"),
            query("latest", BOOLEAN, "only the latest version of each key"),
        ],
    )
    def get(self, request: AuthenticatedRequest) -> Response:
        filters = self.FilterSerializer(data=request.query_params)
        filters.is_valid(raise_exception=True)
        types = selectors.case_type_list(tenant_id=request.user.tenant_id, **filters.validated_data)
        return Response([case_type_out(t) for t in types])

    @extend_schema(responses={201: openapi.CaseTypeOut})
    def post(self, request: AuthenticatedRequest) -> Response:
        body = self.InputSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        data = body.validated_data
        case_type = services.case_type_create(
            user=request.user,
            key=data["key"],
            display_name=data["displayName"],
            description=data["description"],
            schema=data["schema"],
            prefix=data.get("prefix"),
            sla_hours=data.get("slaHours"),
            access_teams=data["accessTeams"],
        )
        return Response(case_type_out(case_type), status=201)


class CaseTypeDetailApi(APIView):
    """GET only: a registered schema never changes, so PUT/PATCH answer 405."""

    OutputSerializer = openapi.CaseTypeOut
    required = {"GET": "cases:read"}

    def get(self, request: AuthenticatedRequest, case_type_id: uuid.UUID) -> Response:
        case_type = selectors.case_type_get(tenant_id=request.user.tenant_id, case_type_id=case_type_id)
        return Response(case_type_out(case_type))


# --- cases ------------------------------------------------------------------------------------


class CaseListCreateApi(APIView):
    required = {"GET": "cases:read", "POST": "cases:create"}

    class FilterSerializer(QuerySerializer):
        caseTypeId = QueryUUIDField(source="case_type_id")  # noqa: N815 (the API's spellings)
        status = QueryChoiceField(
            choices=selectors.STATUSES, message=f"status must be one of {', '.join(selectors.STATUSES)}"
        )
        createdAfter = QueryTimestampField(source="created_after")  # noqa: N815
        createdBefore = QueryTimestampField(source="created_before")  # noqa: N815
        assignedTo = QueryUUIDField(source="assigned_to", keywords=("me",))  # noqa: N815
        sortBy = QueryChoiceField(  # noqa: N815
            source="sort_by",
            choices=SORT_BY,
            message=f"sortBy must be one of {', '.join(SORT_BY)}",
            default="createdAt",
        )
        order = QueryChoiceField(
            source="descending", choices=("asc", "desc"), message="order must be asc or desc", default="desc"
        )

        def validate_assignedTo(self, value: Any) -> Any:  # noqa: N802
            return self.context["user"].id if value == "me" else value

        def validate_sortBy(self, value: str) -> str:  # noqa: N802
            return SORT_BY[value]

        def validate_order(self, value: str) -> bool:
            return value == "desc"

    class InputSerializer(serializers.Serializer):
        # Exactly one of the two ways to name the case type.
        openapi_extra = {"oneOf": [{"required": ["caseTypeId"]}, {"required": ["case_type_key"]}]}
        caseTypeId = serializers.UUIDField(required=False)
        data = JsonObjectField(required=False)  # type: ignore[assignment]  # a declared field: DRF's metaclass pops it from the class
        workflowVersionId = serializers.UUIDField(required=False, allow_null=True)
        displayName = StrictCharField(required=False, max_length=300)
        # The narrative's alternative form: the latest version of a case type key.
        case_type_key = StrictCharField(required=False, max_length=100)
        case_data = JsonObjectField(required=False)

        def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
            if "caseTypeId" in attrs and "case_type_key" in attrs:
                raise serializers.ValidationError("give caseTypeId or case_type_key, not both")
            if "caseTypeId" not in attrs and "case_type_key" not in attrs:
                raise serializers.ValidationError({"caseTypeId": ["This field is required."]})
            return attrs

    @extend_schema(
        operation_id="cases_list",
        responses=openapi.CasePageOut,
        parameters=[
            *page_parameters(),
            query("caseTypeId", UUID),
            query("status", one_of(*selectors.STATUSES)),
            query("createdAfter", TIMESTAMP_OR_DATE, "created at or after"),
            query("createdBefore", TIMESTAMP_OR_DATE, "created before"),
            query(
                "assignedTo",
                {"type": "string", "anyOf": [{"enum": ["me"]}, {"format": "uuid"}]},
                "holding an active task of the case: a principal id, or me",
            ),
            query("sortBy", one_of(*SORT_BY), "default createdAt"),
            query("order", one_of("asc", "desc"), "default desc"),
        ],
    )
    def get(self, request: AuthenticatedRequest) -> Response:
        page = get_page(request.query_params, default_limit=25, max_limit=100)
        filters = self.FilterSerializer(data=request.query_params, context={"user": request.user})
        filters.is_valid(raise_exception=True)
        found = selectors.case_list_page(user=request.user, page=page, **filters.validated_data)
        return Response(
            {
                "data": [case_list_item_out(case, step) for case, step in found.rows[: page.limit]],
                "total": found.total,
                "next": next_link(request, page, len(found.rows) > page.limit),
            }
        )

    @extend_schema(responses={201: openapi.CaseOut}, extensions=errors_also(404))
    def post(self, request: AuthenticatedRequest) -> Response:
        body = self.InputSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        data = body.validated_data
        tenant_id = request.user.tenant_id
        if "caseTypeId" in data:  # 404 when the case type does not exist
            case_type = selectors.case_type_get(tenant_id=tenant_id, case_type_id=data["caseTypeId"])
            case_data = _require_object(data.get("data", {}), "data")
        else:
            case_type = selectors.case_type_latest(tenant_id=tenant_id, key=data["case_type_key"])
            case_data = _require_object(data.get("case_data", {}), "case_data")
        case = services.case_create(
            user=request.user,
            case_type=case_type,
            data=case_data,
            workflow_version_id=data.get("workflowVersionId"),
            display_name=data.get("displayName"),
        )
        return with_etag(Response(case_out(case), status=201), case)


class CaseSearchApi(APIView):
    throttle_classes = [SearchThrottle]
    OutputSerializer = openapi.SearchPageOut
    required = {"GET": "cases:read"}

    class FilterSerializer(QuerySerializer):
        q = QueryTextField(trim=True)

        def validate_q(self, value: str | None) -> str:
            if value is None:
                raise serializers.ValidationError("q is required")
            if len(value) > 500:
                raise serializers.ValidationError("q must be at most 500 characters")
            return value

    @extend_schema(
        parameters=[
            OpenApiParameter(
                "q",
                {"type": "string", "maxLength": 500, "pattern": NOT_BLANK},
                required=True,
                description="search text",
            ),
            *page_parameters(),
        ]
    )
    def get(self, request: AuthenticatedRequest) -> Response:
        filters = self.FilterSerializer(data=request.query_params)
        filters.is_valid(raise_exception=True)
        page = get_page(request.query_params, default_limit=25, max_limit=100)
        hits, total, has_more = selectors.case_search(
            tenant_id=request.user.tenant_id,
            teams=request.user.rls_teams,
            page=page,
            **filters.validated_data,
        )
        return Response(
            {
                "data": [search_hit_out(h) for h in hits],
                "total": total,
                "next": next_link(request, page, has_more),
            }
        )


class CaseDashboardApi(APIView):
    OutputSerializer = openapi.DashboardOut
    required = {"GET": ("cases:read", "reports:read")}

    def get(self, request: AuthenticatedRequest) -> Response:
        return Response(
            dashboard_out(
                selectors.case_dashboard(tenant_id=request.user.tenant_id, teams=request.user.rls_teams)
            )
        )


class CaseDetailApi(APIView):
    OutputSerializer = openapi.CaseDetailOut
    required = {"GET": "cases:read"}

    def get(self, request: AuthenticatedRequest, case_id: uuid.UUID) -> Response:
        detail = selectors.case_detail(user=request.user, case_id=case_id)
        return with_etag(Response(case_detail_out(detail)), detail.case)


def _if_match_version(request: AuthenticatedRequest) -> int | None:
    raw = request.headers.get("If-Match")
    if not raw:
        return None
    value = raw.strip().removeprefix("W/").strip('"')
    if value == "*":  # RFC 9110: any current representation, i.e. no version check
        return None
    if not value.isdigit():
        raise ValidationFailed('If-Match must be a case version like "3"', field="If-Match")
    return int(value)


class CaseDataUpdateApi(APIView):
    OutputSerializer = openapi.CaseOut
    required = {"PATCH": "cases:update"}

    class InputSerializer(serializers.Serializer):
        data = JsonObjectField()  # type: ignore[assignment]  # a declared field: DRF's metaclass pops it from the class
        # Strict: `"version": "3"` or `true` is a client bug, not an optimistic-lock version.
        version = StrictIntegerField(required=False, min_value=1)

    def patch(self, request: AuthenticatedRequest, case_id: uuid.UUID) -> Response:
        body = self.InputSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        patch = _require_object(body.validated_data["data"], "data")
        version = body.validated_data.get("version")  # the body wins over If-Match when both are sent
        if version is None:
            version = _if_match_version(request)
        case = selectors.access_case(user=request.user, case_id=case_id)
        case = services.case_update_data(user=request.user, case=case, patch=patch, expected_version=version)
        return with_etag(Response(case_out(case)), case)


class CaseCloseApi(APIView):
    OutputSerializer = openapi.CaseOut
    required = {"POST": "cases:update"}  # closing needs cases:update (there is no cases:close)

    class InputSerializer(serializers.Serializer):
        reason = StrictCharField(required=False, allow_blank=True, default="", max_length=2000)
        outcome = StrictCharField(required=False, allow_blank=True, default="", max_length=200)

    def post(self, request: AuthenticatedRequest, case_id: uuid.UUID) -> Response:
        body = self.InputSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        case = selectors.access_case(user=request.user, case_id=case_id)
        case = services.case_close(user=request.user, case=case, **body.validated_data)
        return Response(case_out(case))


class CaseCancelApi(APIView):
    OutputSerializer = openapi.CaseOut
    required = {"POST": "cases:update"}

    class InputSerializer(serializers.Serializer):
        reason = StrictCharField(required=False, allow_blank=True, default="", max_length=2000)

    def post(self, request: AuthenticatedRequest, case_id: uuid.UUID) -> Response:
        body = self.InputSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        case = selectors.access_case(user=request.user, case_id=case_id)
        case = services.case_cancel(user=request.user, case=case, **body.validated_data)
        return Response(case_out(case))


class CaseBulkApi(APIView):
    required = {"POST": "cases:update"}  # what closing or cancelling one case needs

    class InputSerializer(StrictSerializer):
        action = serializers.ChoiceField(choices=services.CASE_BULK_ACTIONS)
        caseIds = serializers.ListField(
            child=serializers.UUIDField(), required=False, allow_null=True, default=None
        )
        filter = serializers.DictField(required=False, allow_null=True, default=None)
        outcome = StrictCharField(required=False, allow_blank=True, default="", max_length=200)
        reason = StrictCharField(required=False, allow_blank=True, default="", max_length=2000)

    @extend_schema(responses={200: OpenApiTypes.OBJECT})
    def post(self, request: AuthenticatedRequest) -> Response:
        body = self.InputSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        data = body.validated_data
        one_of_list_or_filter(data, "caseIds")
        if data["filter"] is not None:
            if not has_permission(request.user.get_permission_strings(), "cases:read"):
                raise PermissionDenied("Requires permission cases:read.")  # as GET /cases would
            filters = CaseListCreateApi.FilterSerializer(
                data=as_query(data["filter"]), context={"user": request.user}
            )
            filters.is_valid(raise_exception=True)
            case_ids = list(
                selectors.case_list(user=request.user, **filters.validated_data).values_list("id", flat=True)[
                    : BULK_MAX + 1
                ]
            )
            check_count(len(case_ids), "filter")
        else:
            case_ids = data["caseIds"]
        result = services.cases_bulk(
            user=request.user,
            action=data["action"],
            case_ids=case_ids,
            outcome=data["outcome"],
            reason=data["reason"],
        )
        return Response(result)


def comment_out(comment: CaseComment) -> dict[str, Any]:
    author = comment.author
    return {
        "id": str(comment.id),
        "body": comment.body,
        "author": {"id": str(author.id), "email": author.email} if author else None,
        "createdAt": iso(comment.created_at),
    }


class CaseCommentListCreateApi(APIView):
    required = {"GET": "cases:read", "POST": "cases:update"}

    class InputSerializer(StrictSerializer):
        # As given: no trimming, so what was written is what is stored and shown.
        body = StrictCharField(max_length=comments.BODY_MAX, trim_whitespace=False)

    @extend_schema(parameters=page_parameters(), responses={200: OpenApiTypes.OBJECT})
    def get(self, request: AuthenticatedRequest, case_id: uuid.UUID) -> Response:
        case = selectors.access_case(user=request.user, case_id=case_id)
        page = get_page(request.query_params, default_limit=50, max_limit=200)
        rows, total = comments.comment_list(case=case, page=page)
        return Response(list_body("data", [comment_out(c) for c in rows], total, page))

    @extend_schema(responses={201: OpenApiTypes.OBJECT})
    def post(self, request: AuthenticatedRequest, case_id: uuid.UUID) -> Response:
        case = selectors.access_case(user=request.user, case_id=case_id)  # 404 before any 400
        body = self.InputSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        comment = comments.comment_add(user=request.user, case=case, body=body.validated_data["body"])
        return Response(comment_out(comment), status=201)
