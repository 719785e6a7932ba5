"""The audit trail, for admins only: list, verify the hash chain, export."""

from __future__ import annotations

from typing import Any

from django.http import StreamingHttpResponse
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from orchestrator.audit import openapi, selectors, services
from orchestrator.audit.models import AuditEvent
from shared.api.openapi import EXPORT_RESPONSES, page_parameters
from shared.api.pagination import get_page, list_body
from shared.audit.services import VerifyResult, event_to_dict, export_csv, export_json

ADMIN_ONLY = {"GET": "admin"}
CONTENT_TYPES = {"csv": "text/csv; charset=utf-8", "json": "application/json"}


class ExportNegotiation(DefaultContentNegotiation):
    """`?format=csv|json` names the export file format here, not a DRF renderer: ignore it."""

    def select_renderer(self, request: Any, renderers: Any, format_suffix: Any = None) -> Any:
        return renderers[0], renderers[0].media_type


def audit_event_out(event: AuditEvent) -> dict[str, Any]:
    return event_to_dict(event)


def audit_verify_out(result: VerifyResult) -> dict[str, Any]:
    return {
        "status": "valid" if result.is_valid else "invalid",
        "entries_checked": result.entries_checked,
        "first_invalid": str(result.first_broken.id) if result.first_broken else None,
    }


class AuditEventListApi(APIView):
    min_role = ADMIN_ONLY

    @extend_schema(
        responses=openapi.AuditEventListOut,
        parameters=[
            *page_parameters(default_limit=50, max_limit=500),
            *[OpenApiParameter(name, str) for name in selectors.FILTERS],
        ],
    )
    def get(self, request: Request) -> Response:
        page = get_page(request.query_params, default_limit=50, max_limit=500)
        filters = {key: request.query_params.get(key, "") for key in selectors.FILTERS}
        events = selectors.audit_event_list(filters=filters)
        total = events.count()
        items = [audit_event_out(e) for e in events[page.offset : page.offset + page.limit]]
        return Response(list_body("events", items, total, page))


class AuditVerifyApi(APIView):
    min_role = ADMIN_ONLY

    @extend_schema(responses=openapi.AuditVerifyOut)
    def get(self, request: Request) -> Response:
        return Response(audit_verify_out(services.audit_chain_verify()))


class AuditExportApi(APIView):
    min_role = ADMIN_ONLY
    content_negotiation_class = ExportNegotiation

    @extend_schema(
        responses=EXPORT_RESPONSES,
        parameters=[OpenApiParameter("format", str, enum=list(selectors.EXPORT_FORMATS))],
    )
    def get(self, request: Request) -> StreamingHttpResponse:
        fmt = selectors.export_format(request.query_params)
        events = selectors.audit_export_events()
        content = export_csv(events) if fmt == "csv" else export_json(events)
        response = StreamingHttpResponse(content, content_type=CONTENT_TYPES[fmt])
        response["Content-Disposition"] = f'attachment; filename="orchestrator-audit.{fmt}"'
        response["X-Content-Type-Options"] = "nosniff"
        return response
