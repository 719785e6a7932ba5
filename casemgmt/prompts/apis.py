"""Prompt template endpoints (permissions agents:read / agents:write)."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_field
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from casemgmt.prompts import openapi
from casemgmt.prompts.models import PromptTemplate
from casemgmt.prompts.selectors import (
    prompt_template_first_created,
    prompt_template_get,
    prompt_template_latest,
    prompt_template_latest_version,
)
from casemgmt.prompts.services import NAME_RE, prompt_template_create, prompt_template_new_version
from shared.api.fields import StrictCharField, StrictFloatField, StrictIntegerField
from shared.api.time import iso


@extend_schema_field({"type": "string", "pattern": NAME_RE.pattern})
class PromptNameField(StrictCharField):
    """Checked against NAME_RE by the service."""


class TemplateInput(serializers.Serializer):
    description = StrictCharField(required=False, allow_blank=True, default="")
    template = StrictCharField(max_length=100_000, trim_whitespace=False)
    model = StrictCharField(required=False, allow_blank=True, default="", max_length=200)
    temperature = StrictFloatField(required=False, allow_null=True, default=None, min_value=0, max_value=2)
    maxTokens = StrictIntegerField(
        required=False, allow_null=True, default=None, min_value=1, max_value=1_000_000
    )


def _template_args(data: dict[str, Any]) -> dict[str, Any]:
    """The service's keyword arguments for a validated `TemplateInput` (create and new version)."""
    return {
        "description": data["description"],
        "template": data["template"],
        "model": data["model"],
        "temperature": data["temperature"],
        "max_tokens": data["maxTokens"],
    }


def template_out(
    template: PromptTemplate, *, created_at: Any = None, latest: int | None = None, full: bool = True
) -> dict[str, Any]:
    out: dict[str, Any] = {
        "name": template.name,
        "description": template.description,
        "model": template.model,
        "temperature": template.temperature,
        "maxTokens": template.max_tokens,
        "version": template.version,
        "latestVersion": latest if latest is not None else prompt_template_latest_version(template=template),
        "createdAt": iso(created_at or prompt_template_first_created(template=template)),
        "updatedAt": iso(template.created_at),
    }
    if full:
        out["template"] = template.template
    return out


class PromptTemplateListCreateApi(APIView):
    required = {"GET": "agents:read", "POST": "agents:write"}
    OutputSerializer = openapi.TemplateOut

    class InputSerializer(TemplateInput):
        name = PromptNameField(max_length=100)

    @extend_schema(responses=openapi.TemplateOut(many=True))
    def get(self, request: Request) -> Response:
        rows = prompt_template_latest(tenant_id=request.user.tenant_id)
        return Response(
            [template_out(t, created_at=first, latest=t.version, full=False) for t, first in rows]
        )

    @extend_schema(responses={201: openapi.TemplateOut})
    def post(self, request: Request) -> Response:
        body = self.InputSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        data = body.validated_data
        template = prompt_template_create(user=request.user, name=data["name"], **_template_args(data))
        return Response(template_out(template, created_at=template.created_at, latest=1), status=201)


# The path's template name, as the service checks it (another name is refused with a 400).
NAME_PARAMETER = OpenApiParameter(
    "name", {"type": "string", "pattern": NAME_RE.pattern}, OpenApiParameter.PATH
)


@extend_schema(parameters=[NAME_PARAMETER])
class PromptTemplateDetailApi(APIView):
    """PUT creates the next version; GET answers the latest version."""

    required = {"GET": "agents:read", "PUT": "agents:write"}
    OutputSerializer = openapi.TemplateOut

    class InputSerializer(TemplateInput):
        name = StrictCharField(max_length=100, required=False)

    def get(self, request: Request, name: str) -> Response:
        return Response(template_out(prompt_template_get(tenant_id=request.user.tenant_id, name=name)))

    def put(self, request: Request, name: str) -> Response:
        body = self.InputSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        template = prompt_template_new_version(
            user=request.user, name=name, **_template_args(body.validated_data)
        )
        return Response(template_out(template, latest=template.version))


@extend_schema(parameters=[NAME_PARAMETER])
class PromptTemplateVersionApi(APIView):
    required = {"GET": "agents:read"}
    OutputSerializer = openapi.TemplateOut

    def get(self, request: Request, name: str, version: int) -> Response:
        template = prompt_template_get(tenant_id=request.user.tenant_id, name=name, version=version)
        return Response(template_out(template))
