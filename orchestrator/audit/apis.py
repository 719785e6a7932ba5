"""The audit trail, for admins only: list, verify the hash chain, export."""

from __future__ import annotations

from typing import Any

from django.http import StreamingHttpResponse
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from orchestrator.audit import checkpoints, openapi, selectors
from orchestrator.audit.models import AuditEvent
from shared.api.openapi import EXPORT_RESPONSES, page_parameters
from shared.api.pagination import get_page, list_body
from shared.api.querying import QuerySerializer, QueryTextField
from shared.audit.checkpoints import (
    CheckpointReport,
    VerifyFromSerializer,
    checkpoint_out,
    checkpoint_report_out,
)
from shared.audit.openapi import CheckpointKeysOut
from shared.audit.services import VerifyResult, event_to_dict, export_csv, export_json

ADMIN_ONLY = {"GET": "admin"}
CONTENT_TYPES = {"csv": "text/csv; charset=utf-8", "json": "application/json"}


class ExportNegotiation(DefaultContentNegotiation):
    """`?format=csv|json` names the export file format here, not a DRF renderer: ignore it."""

    def select_renderer(self, request: Any, renderers: Any, format_suffix: Any = None) -> Any:
        return renderers[0], renderers[0].media_type


def audit_event_out(event: AuditEvent) -> dict[str, Any]:
    return event_to_dict(event)


def audit_verify_out(result: VerifyResult, report: CheckpointReport) -> dict[str, Any]:
    return {
        "status": "valid" if result.is_valid else "invalid",
        "entries_checked": result.entries_checked,
        "first_invalid": str(result.first_broken.id) if result.first_broken else None,
        "errors": result.errors,
        "checkpoints": checkpoint_report_out(report),
    }


class AuditEventListApi(APIView):
    min_role = ADMIN_ONLY

    class FilterSerializer(QuerySerializer):
        action = QueryTextField()
        actor = QueryTextField()
        resource = QueryTextField()

    @extend_schema(
        responses=openapi.AuditEventListOut,
        parameters=[
            *page_parameters(default_limit=50, max_limit=500),
            *[OpenApiParameter(name, str) for name in selectors.FILTERS],
        ],
    )
    def get(self, request: Request) -> Response:
        page = get_page(request.query_params, default_limit=50, max_limit=500)
        filters = self.FilterSerializer(data=request.query_params)
        filters.is_valid(raise_exception=True)
        events = selectors.audit_event_list(**filters.validated_data)
        total = events.count()
        items = [audit_event_out(e) for e in events[page.offset : page.offset + page.limit]]
        return Response(list_body("events", items, total, page))


class AuditVerifyApi(APIView):
    min_role = ADMIN_ONLY
    FilterSerializer = VerifyFromSerializer

    @extend_schema(
        responses=openapi.AuditVerifyOut,
        parameters=[
            OpenApiParameter(
                "from",
                str,
                enum=["genesis", "checkpoint"],
                description="genesis (default): walk every event; checkpoint: only the events after "
                "the last signed checkpoint that holds (every checkpoint is still checked)",
            )
        ],
    )
    def get(self, request: Request) -> Response:
        filters = self.FilterSerializer(data=request.query_params)
        filters.is_valid(raise_exception=True)
        result, report = checkpoints.audit_chain_verify_checkpointed(**filters.validated_data)
        return Response(audit_verify_out(result, report))


class AuditCheckpointListApi(APIView):
    """The chain's signed checkpoints, newest first, for an outside witness to keep."""

    min_role = ADMIN_ONLY

    @extend_schema(
        responses=openapi.AuditCheckpointListOut, parameters=page_parameters(default_limit=50, max_limit=500)
    )
    def get(self, request: Request) -> Response:
        page = get_page(request.query_params, default_limit=50, max_limit=500)
        rows = selectors.audit_checkpoint_list()
        total = rows.count()
        current = checkpoints.policy()
        items = [checkpoint_out(current, row) for row in rows[page.offset : page.offset + page.limit]]
        return Response(list_body("checkpoints", items, total, page))


class AuditCheckpointKeysApi(APIView):
    """The public keys that verify checkpoints (the first signs new ones)."""

    min_role = ADMIN_ONLY

    @extend_schema(responses=CheckpointKeysOut)
    def get(self, request: Request) -> Response:
        return Response({"keys": checkpoints.policy().keyring.public_keys_out()})


class AuditExportApi(APIView):
    min_role = ADMIN_ONLY
    content_negotiation_class = ExportNegotiation

    class FilterSerializer(QuerySerializer):
        # absent: json; empty or anything else: 400
        format = serializers.CharField(
            required=False, default="json", allow_blank=True, trim_whitespace=False
        )

        def validate_format(self, value: str) -> str:
            if value not in selectors.EXPORT_FORMATS:
                raise serializers.ValidationError("format must be csv or json")
            return value

    @extend_schema(
        responses=EXPORT_RESPONSES,
        parameters=[OpenApiParameter("format", str, enum=list(selectors.EXPORT_FORMATS))],
    )
    def get(self, request: Request) -> StreamingHttpResponse:
        filters = self.FilterSerializer(data=request.query_params)
        filters.is_valid(raise_exception=True)
        fmt = filters.validated_data["format"]
        events = selectors.audit_export_events()
        content = export_csv(events) if fmt == "csv" else export_json(events)
        response = StreamingHttpResponse(content, content_type=CONTENT_TYPES[fmt])
        response["Content-Disposition"] = f'attachment; filename="orchestrator-audit.{fmt}"'
        response["X-Content-Type-Options"] = "nosniff"
        return response
