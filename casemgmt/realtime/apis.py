"""`POST /ws/ticket`: a one-use ticket for opening `/ws` without a credential in the URL."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiExample, OpenApiResponse, extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from casemgmt.realtime.tickets import TICKET_SECONDS, ticket_issue
from shared.api import errors
from shared.api.time import iso
from shared.auth.tokens import bearer_token

TICKET_OUT = inline_serializer(
    "WebSocketTicket",
    {"ticket": serializers.CharField(), "expiresAt": serializers.DateTimeField()},
)


class WebSocketTicketApi(APIView):
    # Any authenticated principal may open `/ws` (what it then receives is filtered by its own
    # permissions and tenant), so any may ask for a ticket.
    required = {"POST": ""}

    @extend_schema(
        summary="One-use ticket for the WebSocket",
        tags=["realtime"],
        description=(
            f"Answers a ticket that opens one socket at `/ws?ticket=<ticket>` within {TICKET_SECONDS} "
            "seconds, once. The socket acts for the credential that asked for the ticket and is "
            "closed with code 4401 when that credential stops authenticating (logout, disabled "
            "account, password change, expiry). Prefer it to `/ws?token=<JWT>`: a URL is written to "
            "proxy logs, and a ticket found there is already used or expired. A socket opened "
            "without a valid ticket or token is closed with code 4401."
        ),
        request=None,
        responses={
            200: OpenApiResponse(
                TICKET_OUT,
                examples=[
                    OpenApiExample(
                        "ticket", value={"ticket": "q3v…", "expiresAt": "2026-01-01T12:00:30.000Z"}
                    )
                ],
            )
        },
    )
    def post(self, request: Request) -> Response:
        credential = bearer_token(request.META.get("HTTP_AUTHORIZATION"))
        if credential is None:  # authenticated otherwise than by a bearer credential
            raise errors.NotAuthenticated("A ticket is issued for a bearer credential.")
        issued = ticket_issue(credential=credential)
        return Response({"ticket": issued.ticket, "expiresAt": iso(issued.expires_at)})
