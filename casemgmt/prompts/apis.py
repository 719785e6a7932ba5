"""Prompt template endpoints (permissions agents:read / agents:write)."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from casemgmt.prompts.models import PromptTemplate
from casemgmt.prompts.selectors import (
    prompt_template_first_created,
    prompt_template_get,
    prompt_template_latest,
    prompt_template_latest_version,
)
from casemgmt.prompts.services import prompt_template_create, prompt_template_new_version
from shared.api.time import iso


class TemplateInput(serializers.Serializer):
    description = serializers.CharField(required=False, allow_blank=True, default="")
    template = serializers.CharField(max_length=100_000, trim_whitespace=False)
    model = serializers.CharField(required=False, allow_blank=True, default="", max_length=200)
    temperature = serializers.FloatField(
        required=False, allow_null=True, default=None, min_value=0, max_value=2
    )
    maxTokens = serializers.IntegerField(
        required=False, allow_null=True, default=None, min_value=1, max_value=1_000_000
    )

    def fields_for_service(self) -> dict[str, Any]:
        data = self.validated_data
        return {
            "description": data["description"],
            "template": data["template"],
            "model": data["model"],
            "temperature": data["temperature"],
            "max_tokens": data["maxTokens"],
        }


class TemplateOutput(serializers.Serializer):
    """Documentation of the response shape; `template` is absent from list items."""

    name = serializers.CharField()
    description = serializers.CharField()
    template = serializers.CharField(required=False)
    model = serializers.CharField()
    temperature = serializers.FloatField(allow_null=True)
    maxTokens = serializers.IntegerField(allow_null=True)
    version = serializers.IntegerField()
    latestVersion = serializers.IntegerField()
    createdAt = serializers.DateTimeField()
    updatedAt = serializers.DateTimeField()


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
    OutputSerializer = TemplateOutput

    class InputSerializer(TemplateInput):
        name = serializers.CharField(max_length=100)

    @extend_schema(responses=TemplateOutput(many=True))
    def get(self, request):
        rows = prompt_template_latest(tenant_id=request.user.tenant_id)
        return Response(
            [template_out(t, created_at=first, latest=t.version, full=False) for t, first in rows]
        )

    @extend_schema(responses={201: TemplateOutput})
    def post(self, request):
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        template = prompt_template_create(
            user=request.user, name=serializer.validated_data["name"], **serializer.fields_for_service()
        )
        return Response(template_out(template, created_at=template.created_at, latest=1), status=201)


class PromptTemplateDetailApi(APIView):
    """PUT creates the next version; GET answers the latest version."""

    required = {"GET": "agents:read", "PUT": "agents:write"}
    OutputSerializer = TemplateOutput

    class InputSerializer(TemplateInput):
        name = serializers.CharField(max_length=100, required=False)

    def get(self, request, name: str):
        return Response(template_out(prompt_template_get(tenant_id=request.user.tenant_id, name=name)))

    def put(self, request, name: str):
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        template = prompt_template_new_version(
            user=request.user, name=name, **serializer.fields_for_service()
        )
        return Response(template_out(template, latest=template.version))


class PromptTemplateVersionApi(APIView):
    required = {"GET": "agents:read"}
    OutputSerializer = TemplateOutput

    def get(self, request, name: str, version: int):
        template = prompt_template_get(tenant_id=request.user.tenant_id, name=name, version=version)
        return Response(template_out(template))
