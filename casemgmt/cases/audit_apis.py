"""One case's audit trail: list, verify, export. Served here rather than by the audit app because
the cases app owns case access (`access_case`); the audit app below provides the reads and the
rendering."""

from __future__ import annotations

from typing import Any

from django.http import StreamingHttpResponse
from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from casemgmt.audit import openapi, selectors, services
from casemgmt.audit.apis import FORMAT_PARAMETER, ExportNegotiation, case_verify_out, paged
from casemgmt.audit.exports import export_response
from casemgmt.cases.selectors import access_case
from casemgmt.tenancy.throttling import ExportThrottle
from shared.api.openapi import EXPORT_RESPONSES, page_parameters
from shared.api.querying import QueryExportFormatField, QuerySerializer


class CaseEventListApi(APIView):
    OutputSerializer = openapi.AuditPageOut
    required = {"GET": ("cases:read", "audit:read")}

    @extend_schema(parameters=page_parameters(default_limit=50, max_limit=500))
    def get(self, request: Request, case_id: Any) -> Response:
        case = access_case(user=request.user, case_id=case_id)
        return paged(request, selectors.case_event_list(tenant_id=case.tenant_id, case_id=case.id))


class CaseEventVerifyApi(APIView):
    OutputSerializer = openapi.CaseVerifyOut
    required = {"POST": "audit:read"}  # verifying needs only audit:read (there is no audit:verify)

    def post(self, request: Request, case_id: Any) -> Response:
        case = access_case(user=request.user, case_id=case_id)
        events = selectors.case_events(tenant_id=case.tenant_id, case_id=case.id)
        result = services.verify_events_in_chain(tenant_id=case.tenant_id, events=events.iterator())
        services.audit_record_verification(user=request.user, scope=f"audit/cases/{case.id}", result=result)
        return Response(case_verify_out(result))


class CaseEventExportApi(APIView):
    throttle_classes = [ExportThrottle]
    content_negotiation_class = ExportNegotiation
    required = {"GET": "audit:read"}

    class FilterSerializer(QuerySerializer):
        format = QueryExportFormatField()

    @extend_schema(responses=EXPORT_RESPONSES, parameters=[FORMAT_PARAMETER])
    def get(self, request: Request, case_id: Any) -> StreamingHttpResponse:
        filters = self.FilterSerializer(data=request.query_params)
        filters.is_valid(raise_exception=True)
        fmt = filters.validated_data["format"]
        case = access_case(user=request.user, case_id=case_id)
        services.audit_record_export(
            user=request.user, scope=f"audit/cases/{case.id}", params={"format": fmt, "caseId": str(case.id)}
        )
        events = selectors.case_events(tenant_id=case.tenant_id, case_id=case.id)
        return export_response(request._request, events, fmt, f"case-{case.case_number}-events")
