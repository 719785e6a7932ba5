"""The orchestrator's callback: `POST /webhooks/orchestrator/{tenant}`, signed, no user session."""

from __future__ import annotations

from uuid import UUID

from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from casemgmt.dags import openapi, services
from shared.api.openapi import errors_also


class OrchestratorCallbackApi(APIView):
    """Authenticated by its signature alone: `X-Service-Signature-Timestamped` is
    `sha256=<HMAC-SHA256 of "<X-Service-Timestamp>.<raw body>">` with the tenant's webhookSecret.
    A bad signature or a timestamp more than 5 minutes away is refused (401); the same callback
    sent again is accepted and ignored (200, `applied: false`)."""

    authentication_classes: list = []
    required = {"POST": None}

    @extend_schema(request=None, responses=openapi.CallbackOut, extensions=errors_also(401))
    def post(self, request: Request, tenant_id: UUID) -> Response:
        dag_run_ids = services.dag_callback_accept(
            tenant_id=tenant_id,
            timestamp=request.headers.get("X-Service-Timestamp", ""),
            sig=request.headers.get("X-Service-Signature-Timestamped", ""),
            body=request.body,
        )
        return Response({"applied": bool(dag_run_ids)})
