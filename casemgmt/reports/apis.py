"""Report endpoints. Every one needs `reports:read`, saved-report writes included (the permission
the interface names for them)."""

from __future__ import annotations

from typing import Any
from uuid import UUID

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from casemgmt.accounts.request import AuthenticatedRequest
from casemgmt.cases.models import Case
from casemgmt.cases.selectors import Dashboard, case_dashboard
from casemgmt.reports import openapi, selectors, services
from casemgmt.reports.models import Report
from casemgmt.reports.sqlcheck import MAX_QUERY_CHARS
from casemgmt.tenancy.throttling import ReportQueryThrottle
from shared.api.fields import StrictCharField
from shared.api.openapi import TEXT, TIMESTAMP_OR_DATE, page_parameters, query
from shared.api.pagination import get_page
from shared.api.querying import QuerySerializer, QueryTextField, QueryTimestampField
from shared.api.time import iso


def dashboard_out(dashboard: Dashboard) -> dict[str, Any]:
    return {
        "totalActive": dashboard.by_status[Case.ACTIVE],
        "totalClosed": dashboard.by_status[Case.CLOSED],
        "avgResolutionTime": dashboard.avg_resolution_seconds,
        "slaComplianceRate": dashboard.sla_compliance_rate,
        "byStatus": dashboard.by_status,
        "byType": dashboard.by_type,
    }


def period_out(period: selectors.Period) -> str:
    return f"{iso(period.start)}/{iso(period.end)}"


def summary_out(summary: selectors.Summary, period: selectors.Period) -> dict[str, Any]:
    return {
        "period": period_out(period),
        "totalCases": summary.total,
        "byStatus": summary.by_status,
        "avgResolutionTime": summary.avg_resolution_seconds,
        "slaComplianceRate": summary.sla_compliance_rate,
    }


def sla_compliance_out(sla: selectors.SlaCompliance, period: selectors.Period) -> dict[str, Any]:
    return {
        "period": period_out(period),
        "onTimeCount": sla.on_time,
        "breachedCount": sla.breached,
        "complianceRate": sla.compliance_rate,
        "avgBreachTime": sla.avg_breach_seconds,
    }


def report_out(report: Report) -> dict[str, Any]:
    return {
        "id": str(report.id),
        "name": report.name,
        "query": report.query,
        "createdBy": str(report.created_by_id) if report.created_by_id else None,
        "createdAt": iso(report.created_at),
        "updatedAt": iso(report.updated_at),
    }


def run_out(run: services.Run) -> dict[str, Any]:
    return {
        "reportId": str(run.report.id),
        "executedAt": iso(run.executed_at),
        "rowCount": len(run.result.rows),
        "truncated": run.result.truncated,
        "data": run.result.rows,
    }


def answer_out(answer: services.Answer) -> dict[str, Any]:
    return {
        "question": answer.question,
        "query": answer.query,
        "result": answer.result.rows,
        "truncated": answer.result.truncated,
    }


class PeriodFilterSerializer(QuerySerializer):
    """A report's period and case type: `from` and `to` (`from`, a Python keyword, cannot be a
    declared field) are read into `start` and `end`."""

    caseType = QueryTextField(source="case_type")  # noqa: N815 (the API's spelling)

    def get_fields(self) -> dict[str, serializers.Field]:
        period = {"from": QueryTimestampField(source="start"), "to": QueryTimestampField(source="end")}
        return {**period, **super().get_fields()}


def _filters(
    filter_serializer: type[PeriodFilterSerializer], request: AuthenticatedRequest
) -> tuple[selectors.Period, str | None]:
    filters = filter_serializer(data=request.query_params)
    filters.is_valid(raise_exception=True)
    values = filters.validated_data
    return selectors.report_period(start=values["start"], end=values["end"]), values["case_type"]


class ReportDashboardApi(APIView):
    OutputSerializer = openapi.ReportDashboardOut
    required = {"GET": "reports:read"}

    def get(self, request: AuthenticatedRequest) -> Response:
        return Response(
            dashboard_out(
                case_dashboard(tenant_id=request.user.tenant_id, teams=request.user.rls_teams, ageing=False)
            )
        )


class ReportSummaryApi(APIView):
    """Cases created in [from, to) (default: the 30 days up to now), optionally of one caseType
    (a key, or one version's id)."""

    OutputSerializer = openapi.ReportSummaryOut
    required = {"GET": "reports:read"}
    FilterSerializer = PeriodFilterSerializer

    @extend_schema(
        parameters=[
            query("from", TIMESTAMP_OR_DATE, "start of the period (default: 30 days before to)"),
            query("to", TIMESTAMP_OR_DATE, "end of the period, exclusive (default: now)"),
            query("caseType", TEXT, "a case type key, or one version's id"),
        ]
    )
    def get(self, request: AuthenticatedRequest) -> Response:
        period, case_type = _filters(self.FilterSerializer, request)
        summary = selectors.report_summary(
            tenant_id=request.user.tenant_id, teams=request.user.rls_teams, period=period, case_type=case_type
        )
        return Response(summary_out(summary, period))


class ReportSlaComplianceApi(APIView):
    """The same period and caseType parameters as the summary."""

    OutputSerializer = openapi.SlaComplianceOut
    required = {"GET": "reports:read"}
    FilterSerializer = PeriodFilterSerializer

    @extend_schema(
        parameters=[
            query("from", TIMESTAMP_OR_DATE, "start of the period (default: 30 days before to)"),
            query("to", TIMESTAMP_OR_DATE, "end of the period, exclusive (default: now)"),
            query("caseType", TEXT, "a case type key, or one version's id"),
        ]
    )
    def get(self, request: AuthenticatedRequest) -> Response:
        period, case_type = _filters(self.FilterSerializer, request)
        sla = selectors.report_sla_compliance(
            tenant_id=request.user.tenant_id, teams=request.user.rls_teams, period=period, case_type=case_type
        )
        return Response(sla_compliance_out(sla, period))


class ReportAskApi(APIView):
    throttle_classes = [ReportQueryThrottle]
    OutputSerializer = openapi.AnswerOut
    required = {"POST": "reports:read"}

    class InputSerializer(serializers.Serializer):
        question = StrictCharField(max_length=2000)

    def post(self, request: AuthenticatedRequest) -> Response:
        body = self.InputSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        answer = services.report_ask(user=request.user, question=body.validated_data["question"])
        return Response(answer_out(answer))


class ReportInput(serializers.Serializer):
    name = StrictCharField(max_length=200)
    query = StrictCharField(max_length=MAX_QUERY_CHARS, trim_whitespace=False)


class ReportListCreateApi(APIView):
    required = {"GET": "reports:read", "POST": "reports:read"}

    class InputSerializer(ReportInput):
        pass

    @extend_schema(
        responses=openapi.ReportOut(many=True), parameters=page_parameters(default_limit=100, max_limit=500)
    )
    def get(self, request: AuthenticatedRequest) -> Response:
        page = get_page(request.query_params, default_limit=100, max_limit=500)
        reports = selectors.report_list(tenant_id=request.user.tenant_id, page=page)
        return Response([report_out(report) for report in reports])

    @extend_schema(responses={201: openapi.ReportOut})
    def post(self, request: AuthenticatedRequest) -> Response:
        body = self.InputSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        report = services.report_create(user=request.user, **body.validated_data)
        return Response(report_out(report), status=201)


class ReportDetailApi(APIView):
    """PUT replaces the name and the query (both required)."""

    OutputSerializer = openapi.ReportOut
    required = {"GET": "reports:read", "PUT": "reports:read", "DELETE": "reports:read"}

    class InputSerializer(ReportInput):
        pass

    def get(self, request: AuthenticatedRequest, report_id: UUID) -> Response:
        return Response(
            report_out(selectors.report_get(tenant_id=request.user.tenant_id, report_id=report_id))
        )

    def put(self, request: AuthenticatedRequest, report_id: UUID) -> Response:
        body = self.InputSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        report = selectors.report_get(tenant_id=request.user.tenant_id, report_id=report_id)
        report = services.report_update(user=request.user, report=report, **body.validated_data)
        return Response(report_out(report))

    @extend_schema(responses={204: None})
    def delete(self, request: AuthenticatedRequest, report_id: UUID) -> Response:
        report = selectors.report_get(tenant_id=request.user.tenant_id, report_id=report_id)
        services.report_delete(user=request.user, report=report)
        return Response(status=204)


class ReportRunApi(APIView):
    throttle_classes = [ReportQueryThrottle]
    OutputSerializer = openapi.ReportRunOut
    required = {"POST": "reports:read"}

    def post(self, request: AuthenticatedRequest, report_id: UUID) -> Response:
        report = selectors.report_get(tenant_id=request.user.tenant_id, report_id=report_id)
        return Response(run_out(services.report_run(user=request.user, report=report)))
