"""Audit endpoints: the tenant-wide administration views and the activity feed. One case's trail
(list, verify, export) is served by the cases app, which owns case access, with the helpers here."""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet
from django.http import StreamingHttpResponse
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from casemgmt.audit import checkpoints, openapi, selectors, services
from casemgmt.audit.exports import export_response
from casemgmt.audit.models import AuditEvent
from casemgmt.tenancy.request import MemberRequest
from casemgmt.tenancy.throttling import ExportThrottle
from shared.api.openapi import (
    EXPORT_RESPONSES,
    LIST_OF_OBJECTS,
    TEXT,
    TIMESTAMP_OR_DATE,
    page_parameters,
    query,
)
from shared.api.pagination import get_page, page_links, parse_int
from shared.api.querying import (
    QueryDateOrTimestampField,
    QueryExportFormatField,
    QuerySerializer,
    QueryTextField,
)
from shared.api.time import iso, now_ms
from shared.audit.checkpoints import (
    CheckpointReport,
    VerifyFromSerializer,
    checkpoint_out,
    checkpoint_report_out,
)
from shared.audit.models import AuditEventBase
from shared.audit.openapi import CheckpointKeysOut
from shared.audit.services import ChainEntry, VerifyResult, event_to_dict
from shared.auth.permissions import has_permission

FORMAT_PARAMETER = OpenApiParameter(
    "format", str, enum=["csv", "json"], description="file format (default json)"
)


class ExportNegotiation(DefaultContentNegotiation):
    """`?format=csv|json` names the export file format here, not a DRF renderer: ignore it."""

    def select_renderer(self, request: Any, renderers: Any, format_suffix: Any = None) -> Any:
        return renderers[0], renderers[0].media_type


class RangeFilterSerializer(QuerySerializer):
    """A time range named by `range_names` (`from`, a Python keyword, cannot be a declared field),
    read into `start` and `end` after the declared fields."""

    range_names: tuple[str, str] = ("from", "to")

    def get_fields(self) -> dict[str, serializers.Field]:
        start, end = self.range_names
        fields = {
            start: QueryDateOrTimestampField(source="start"),
            end: QueryDateOrTimestampField(source="end"),
        }
        return {**super().get_fields(), **fields}

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        low, high, _ = selectors.time_bounds(attrs.get("start"), attrs.get("end"))
        if low and high and low > high:
            start, end = self.range_names
            raise serializers.ValidationError({start: f"{start} must not be after {end}"})
        return attrs


def paged(
    request: Request,
    events: QuerySet[AuditEvent],
    *,
    default_limit: int = 50,
    max_limit: int = 500,
) -> Response:
    page = get_page(request.query_params, default_limit=default_limit, max_limit=max_limit)
    total = events.count()
    rows = events[page.offset : page.offset + page.limit]
    next_url, _ = page_links(request, page, total)
    return Response({"data": [event_to_dict(e) for e in rows], "total": total, "next": next_url})


def chain_entry_out(event: AuditEventBase | ChainEntry | None) -> dict[str, Any] | None:
    if event is None:
        return None
    return {
        "id": str(event.id),
        "sequence": event.sequence,
        "timestamp": iso(event.timestamp),
        "hash": event.hash,
    }


def case_verify_out(result: VerifyResult) -> dict[str, Any]:
    return {
        "isValid": result.is_valid,
        "lastVerifiedAt": iso(now_ms()),
        "entriesChecked": result.entries_checked,
        "redactedEntries": result.redacted_entries,
        "firstInvalidEntry": str(result.first_broken.id) if result.first_broken else None,
        "errors": result.errors,
    }


def chain_verify_out(result: VerifyResult, report: CheckpointReport) -> dict[str, Any]:
    return {
        "status": "valid" if result.is_valid else "invalid",
        "entries_checked": result.entries_checked,
        "first_entry": chain_entry_out(result.first_entry),
        "last_entry": chain_entry_out(result.last_entry),
        "redacted_entries": result.redacted_entries,
        "first_invalid_entry": chain_entry_out(result.first_broken),
        "errors": result.errors,
        "checkpoints": checkpoint_report_out(report),
    }


class AuditListApi(APIView):
    OutputSerializer = openapi.AuditPageOut
    required = {"GET": "admin:audit"}

    class FilterSerializer(RangeFilterSerializer):
        range_names = ("from", "to")
        actor = QueryTextField()
        action = QueryTextField()
        resource = QueryTextField()

    @extend_schema(
        parameters=[
            *page_parameters(default_limit=50, max_limit=500),
            query("from", TIMESTAMP_OR_DATE, "events at or after"),
            query("to", TIMESTAMP_OR_DATE, "events at or before (a bare date: that whole day)"),
            query("actor", TEXT, "exact actor"),
            query("action", TEXT, "exact action"),
            query("resource", TEXT, "exact resource, or a prefix ending in *"),
        ]
    )
    def get(self, request: MemberRequest) -> Response:
        filters = self.FilterSerializer(data=request.query_params)
        filters.is_valid(raise_exception=True)
        return paged(
            request, selectors.audit_list(tenant_id=request.user.member_tenant_id, **filters.validated_data)
        )


class AuditVerifyChainApi(APIView):
    OutputSerializer = openapi.ChainVerifyOut
    required = {"GET": "admin:audit"}
    FilterSerializer = VerifyFromSerializer

    @extend_schema(
        parameters=[
            OpenApiParameter(
                "from",
                str,
                enum=["genesis", "checkpoint"],
                description="genesis (default): walk every event; checkpoint: only the events after "
                "the last signed checkpoint that holds (every checkpoint is still checked)",
            )
        ]
    )
    def get(self, request: MemberRequest) -> Response:
        filters = self.FilterSerializer(data=request.query_params)
        filters.is_valid(raise_exception=True)
        result, report = checkpoints.verify_tenant_chain_checkpointed(
            tenant_id=request.user.member_tenant_id, **filters.validated_data
        )
        services.audit_record_verification(user=request.user, scope="audit/chain", result=result)
        return Response(chain_verify_out(result, report))


class AuditCheckpointListApi(APIView):
    """The tenant chain's signed checkpoints, newest first, for an outside witness to keep."""

    OutputSerializer = openapi.CheckpointPageOut
    required = {"GET": "admin:audit"}

    @extend_schema(parameters=page_parameters(default_limit=50, max_limit=500))
    def get(self, request: MemberRequest) -> Response:
        page = get_page(request.query_params, default_limit=50, max_limit=500)
        rows = selectors.checkpoint_list(tenant_id=request.user.member_tenant_id)
        total = rows.count()
        current = checkpoints.policy()
        data = [checkpoint_out(current, row) for row in rows[page.offset : page.offset + page.limit]]
        next_url, _ = page_links(request, page, total)
        return Response({"data": data, "total": total, "next": next_url})


class AuditCheckpointKeysApi(APIView):
    """The public keys that verify checkpoints (the first signs new ones)."""

    OutputSerializer = CheckpointKeysOut
    required = {"GET": "admin:audit"}

    def get(self, request: MemberRequest) -> Response:
        return Response({"keys": checkpoints.policy().keyring.public_keys_out()})


class AuditExportApi(APIView):
    throttle_classes = [ExportThrottle]
    content_negotiation_class = ExportNegotiation
    required = {"GET": "admin:audit"}

    class FilterSerializer(RangeFilterSerializer):
        range_names = ("start_date", "end_date")
        format = QueryExportFormatField()

    @extend_schema(
        responses=EXPORT_RESPONSES,
        parameters=[
            FORMAT_PARAMETER,
            query("start_date", TIMESTAMP_OR_DATE, "events at or after"),
            query("end_date", TIMESTAMP_OR_DATE, "events at or before (a bare date: that whole day)"),
        ],
    )
    def get(self, request: MemberRequest) -> StreamingHttpResponse:
        params = request.query_params
        filters = self.FilterSerializer(data=params)
        filters.is_valid(raise_exception=True)
        fmt = filters.validated_data.pop("format")
        events = selectors.events_in_range(
            AuditEvent.objects.filter(chain=str(request.user.member_tenant_id)), **filters.validated_data
        ).order_by("sequence")
        # Recorded before streaming: the export itself is part of the trail (and read-only).
        services.audit_record_export(
            user=request.user,
            scope="audit/export",
            params={
                "format": fmt,
                "start_date": params.get("start_date"),
                "end_date": params.get("end_date"),
            },
        )
        return export_response(request._request, events, fmt, "audit-export")


def activity_out(event: AuditEvent, *, with_changes: bool) -> dict[str, Any]:
    # decision: `details` carries the event's resource; its recorded changes (case data diffs,
    # emails, task form data) only for callers who may read the audit trail itself.
    details: dict[str, Any] = {"resource": event.resource}
    if with_changes:
        details["changes"] = event.changes
    return {
        "id": str(event.id),
        "timestamp": iso(event.timestamp),
        "actor": event.actor,
        "action": event.action,
        "details": details,
    }


class ActivityApi(APIView):
    # The activity feed is open to every signed-in user; the changes are not.
    required = {"GET": ""}

    @extend_schema(
        responses=LIST_OF_OBJECTS,
        parameters=[
            OpenApiParameter(
                "limit", {"type": "integer", "minimum": 1, "maximum": 100}, description="default 20"
            )
        ],
    )
    def get(self, request: MemberRequest) -> Response:
        limit = parse_int(request.query_params, "limit", 20, minimum=1, maximum=100)
        events = selectors.activity(tenant_id=request.user.member_tenant_id, limit=limit)
        with_changes = has_permission(request.user.get_permission_strings(), "audit:read")
        return Response([activity_out(e, with_changes=with_changes) for e in events])
