from __future__ import annotations

import re
from typing import Any

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema, extend_schema_field
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from casemgmt.tenancy import selectors, services
from casemgmt.tenancy.defaults import DEFAULT_COLORS
from casemgmt.tenancy.models import DEFAULT_SLA_HOURS_MAX, DEFAULT_TERMINOLOGY, Branding, Theme
from casemgmt.tenancy.request import MemberRequest
from shared.api.fields import StrictBooleanField, StrictCharField, StrictIntegerField, StrictSerializer
from shared.api.openapi import LIST_OF_OBJECTS, UUID, errors_also, query
from shared.api.querying import QuerySerializer, QueryTextField

HEX_COLOUR = r"^#[0-9A-Fa-f]{6}$"
CSS_VARIABLE = re.compile(r"^--[A-Za-z0-9_-]{1,100}$")
# Values end up inside a style sheet: refuse what could close the declaration or the element.
CSS_FORBIDDEN = re.compile(r"[;{}<>\\]")


def branding_out(branding: Branding) -> dict[str, Any]:
    """decision: organizationName = company_name, logoUrl = logo_url, primary/secondaryColor =
    colors.primary/secondary; favicon_url, colors.accent and powered_by are admin-only."""
    return {
        "organizationName": branding.company_name,
        "logoUrl": branding.logo_url or None,
        "primaryColor": branding.colors.get("primary"),
        "secondaryColor": branding.colors.get("secondary"),
    }


def theme_out(theme: Theme) -> dict[str, Any]:
    return {
        "id": str(theme.id),
        "name": theme.name,
        "isDefault": theme.is_default,
        "cssVariables": theme.css_variables,
    }


class BrandingApi(APIView):
    required = {"GET": "", "PUT": "admin:tenant"}

    class InputSerializer(StrictSerializer):
        # Every field is optional: PUT changes the ones given.
        organizationName = StrictCharField(max_length=200, required=False)
        # logoUrl must be an http(s) URL; null or "" removes the logo.
        logoUrl = serializers.URLField(max_length=500, allow_blank=True, allow_null=True, required=False)
        primaryColor = serializers.RegexField(
            HEX_COLOUR, error_messages={"invalid": "Must be a #RRGGBB colour."}, required=False
        )
        secondaryColor = serializers.RegexField(
            HEX_COLOUR, error_messages={"invalid": "Must be a #RRGGBB colour."}, required=False
        )

        def validate_logoUrl(self, value: str | None) -> str:
            if value and not value.lower().startswith(("http://", "https://")):
                raise serializers.ValidationError("Must be an http or https URL.")
            return value or ""

    def get(self, request: MemberRequest) -> Response:
        return Response(branding_out(selectors.branding_of(tenant_id=request.user.member_tenant_id)))

    def put(self, request: MemberRequest) -> Response:
        # decision: PUT accepts any subset of the four fields; the others keep their value.
        data = self.InputSerializer(data=request.data, partial=True)
        data.is_valid(raise_exception=True)
        values = data.validated_data
        changes: dict[str, Any] = {"colors": {}}
        if "organizationName" in values:
            changes["company_name"] = values["organizationName"]
        if "logoUrl" in values:
            changes["logo_url"] = values["logoUrl"]
        for api_name, stored in (("primaryColor", "primary"), ("secondaryColor", "secondary")):
            if api_name in values:
                changes["colors"][stored] = values[api_name].lower()
        branding = services.branding_update(
            tenant=request.user.member_tenant, actor=request.user, changes=changes
        )
        return Response(branding_out(branding))


class TerminologyApi(APIView):
    required = {"GET": "", "PUT": "admin:tenant"}

    # PUT replaces all seven keys, each a string of 1..50 characters.
    InputSerializer = type(
        "TerminologyInputSerializer",
        (StrictSerializer,),
        {key: StrictCharField(min_length=1, max_length=50) for key in DEFAULT_TERMINOLOGY},
    )

    def get(self, request: MemberRequest) -> Response:
        return Response(selectors.terminology_of(tenant_id=request.user.member_tenant_id))

    def put(self, request: MemberRequest) -> Response:
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        services.terminology_replace(
            tenant=request.user.member_tenant, actor=request.user, labels=dict(data.validated_data)
        )
        return Response(selectors.terminology_of(tenant_id=request.user.member_tenant_id))


class TenantSettingsApi(APIView):
    required = {"GET": "", "PUT": "admin:tenant"}

    class InputSerializer(StrictSerializer):
        # null: new cases without slaHours of their own use the service default
        defaultSlaHours = StrictIntegerField(min_value=1, max_value=DEFAULT_SLA_HOURS_MAX, allow_null=True)

    def get(self, request: MemberRequest) -> Response:
        return Response(selectors.tenant_settings_of(tenant_id=request.user.member_tenant_id))

    def put(self, request: MemberRequest) -> Response:
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        services.tenant_settings_update(
            tenant=request.user.member_tenant,
            actor=request.user,
            default_sla_hours=data.validated_data["defaultSlaHours"],
        )
        return Response(selectors.tenant_settings_of(tenant_id=request.user.member_tenant_id))


@extend_schema_field(
    {
        "type": "object",
        "maxProperties": 200,
        "propertyNames": {"pattern": CSS_VARIABLE.pattern},
        "additionalProperties": {"type": "string", "maxLength": 200, "pattern": r"^[^;{}<>\\\x00]*$"},
    }
)
class CssVariablesField(serializers.DictField):
    """Custom property names (--name) to values that cannot close a declaration."""


class ThemeInputSerializer(StrictSerializer):
    name = StrictCharField(min_length=1, max_length=100)
    cssVariables = CssVariablesField(child=StrictCharField(max_length=200, allow_blank=True))
    isDefault = StrictBooleanField(required=False)

    def validate_cssVariables(self, value: dict[str, str]) -> dict[str, str]:
        problems = [
            f"{k!r} is not a CSS custom property name (--name)." for k in value if not CSS_VARIABLE.match(k)
        ]
        problems += [
            f"The value of {k!r} contains ; {{ }} < > or \\."
            for k, v in value.items()
            if CSS_FORBIDDEN.search(v)
        ]
        if len(value) > 200:
            problems.append("At most 200 variables.")
        if problems:
            raise serializers.ValidationError(problems)
        return value


class ThemeListCreateApi(APIView):
    required = {"GET": "", "POST": "admin:tenant"}
    InputSerializer = ThemeInputSerializer

    @extend_schema(responses=LIST_OF_OBJECTS)
    def get(self, request: MemberRequest) -> Response:
        return Response([theme_out(t) for t in selectors.theme_list(tenant_id=request.user.member_tenant_id)])

    @extend_schema(responses={201: OpenApiTypes.OBJECT})
    def post(self, request: MemberRequest) -> Response:
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        theme = services.theme_create(
            tenant=request.user.member_tenant,
            actor=request.user,
            name=data.validated_data["name"],
            css_variables=data.validated_data["cssVariables"],
            is_default=data.validated_data.get("isDefault", False),
        )
        return Response(theme_out(theme), status=201)


class ThemeDetailApi(APIView):
    required = {"PUT": "admin:tenant", "DELETE": "admin:tenant"}
    InputSerializer = ThemeInputSerializer

    def put(self, request: MemberRequest, theme_id) -> Response:
        theme = selectors.theme_get(tenant_id=request.user.member_tenant_id, theme_id=theme_id)
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        theme = services.theme_update(
            theme=theme,
            actor=request.user,
            name=data.validated_data["name"],
            css_variables=data.validated_data["cssVariables"],
            is_default=data.validated_data.get("isDefault"),
        )
        return Response(theme_out(theme))

    def delete(self, request: MemberRequest, theme_id) -> Response:
        theme = selectors.theme_get(tenant_id=request.user.member_tenant_id, theme_id=theme_id)
        services.theme_delete(theme=theme, actor=request.user)
        return Response(status=204)


ICON_TYPES = {".png": "image/png", ".svg": "image/svg+xml", ".jpg": "image/jpeg", ".jpeg": "image/jpeg"}


def manifest_out(branding: Branding | None, default_theme: Theme | None) -> dict[str, Any]:
    """The web-app manifest, built from the branding: name, colours, and the logo as icon."""
    name = branding.company_name if branding else "Case Management"
    background = (default_theme.css_variables if default_theme else {}).get("--color-bg", "#ffffff")
    icons = []
    if branding and branding.logo_url:
        path = branding.logo_url.split("?", 1)[0].lower()
        kind = next((t for ext, t in ICON_TYPES.items() if path.endswith(ext)), None)
        icons.append({"src": branding.logo_url, "sizes": "any", **({"type": kind} if kind else {})})
    return {
        "name": name,
        "short_name": name[:12],
        "start_url": "/",
        "display": "standalone",
        "theme_color": (branding.colors.get("primary") if branding else None) or DEFAULT_COLORS["primary"],
        "background_color": background,
        "icons": icons,
    }


class ManifestApi(APIView):
    authentication_classes: list = []
    required = {"GET": None}

    class FilterSerializer(QuerySerializer):
        # Text, not a UUID field: a malformed id is a tenant that does not exist (404), not a 400.
        tenant = QueryTextField(source="tenant_id")

    @extend_schema(
        parameters=[query("tenant", UUID, "whose branding; default: the only tenant, if one")],
        extensions=errors_also(404),
    )
    def get(self, request: Request) -> Response:
        filters = self.FilterSerializer(data=request.query_params)
        filters.is_valid(raise_exception=True)
        tenant = selectors.manifest_tenant(**filters.validated_data)
        response = Response(manifest_out(*selectors.manifest_branding(tenant)))
        response["Cache-Control"] = "public, max-age=300"
        return response
