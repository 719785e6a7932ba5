from __future__ import annotations

import re
import zoneinfo
from typing import Any

from django.core.validators import RegexValidator
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema, extend_schema_field
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from casemgmt.accounts import selectors, services
from casemgmt.accounts.models import Role, User
from casemgmt.accounts.request import AuthenticatedRequest
from casemgmt.tenancy.models import Theme
from shared.api import errors
from shared.api.fields import (
    StrictBooleanField,
    StrictCharField,
    StrictIntegerField,
    StrictSerializer,
    string_list,
)
from shared.api.openapi import LIST_OF_OBJECTS, TEXT, errors_also, page_parameters, query
from shared.api.pagination import get_page, page_links
from shared.api.querying import QuerySerializer, QueryTextField
from shared.api.time import iso, now_ms
from shared.auth.permissions import has_permission
from shared.web.clientip import client_ip


def user_summary_out(user: User) -> dict[str, Any]:
    return {
        "id": str(user.id),
        "email": user.email,
        "displayName": user.display_name,
        "roles": user.role_names,
    }


def principal_out(user: User) -> dict[str, Any]:
    return {
        **user_summary_out(user),
        "isActive": user.is_active,
        "createdAt": iso(user.created_at),
        "kind": user.kind,
    }


def role_out(role: Role) -> dict[str, Any]:
    return {
        "id": str(role.id),
        "name": role.name,
        "displayName": role.display_name,
        "permissions": list(role.permissions),
        "createdAt": iso(role.created_at),
    }


# --- authentication -------------------------------------------------------------------------------


class LoginApi(APIView):
    authentication_classes: list = []
    required = {"POST": None}

    class InputSerializer(serializers.Serializer):
        email = StrictCharField(max_length=254)
        password = StrictCharField(max_length=1024, trim_whitespace=False)

    @extend_schema(responses={200: OpenApiTypes.OBJECT}, extensions=errors_also(401))
    def post(self, request: Request) -> Response:
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        issued, user = services.auth_login(**data.validated_data, ip=client_ip(request))
        return Response(
            {"token": issued.token, "expiresAt": iso(issued.expires_at), "user": user_summary_out(user)}
        )


class LogoutApi(APIView):
    required = {"POST": ""}

    @extend_schema(responses={204: None})
    def post(self, request: AuthenticatedRequest) -> Response:
        services.auth_logout(claims=request.auth)
        return Response(status=204)


class PasswordChangeApi(APIView):
    required = {"POST": ""}

    class InputSerializer(StrictSerializer):
        currentPassword = StrictCharField(max_length=1024, trim_whitespace=False)
        newPassword = StrictCharField(max_length=1024, trim_whitespace=False)

    @extend_schema(responses={204: None})
    def post(self, request: AuthenticatedRequest) -> Response:
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        services.password_change(
            user=request.user,
            current_password=data.validated_data["currentPassword"],
            new_password=data.validated_data["newPassword"],
        )
        return Response(status=204)


class PasswordSetApi(APIView):
    """The endpoint behind the welcome email's one-time link (public: the token is the credential)."""

    authentication_classes: list = []
    required = {"POST": None}

    class InputSerializer(StrictSerializer):
        token = StrictCharField(max_length=500)
        uid = StrictCharField(max_length=100, required=False)
        newPassword = StrictCharField(max_length=1024, trim_whitespace=False)

    @extend_schema(responses={204: None})
    def post(self, request: Request) -> Response:
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        services.password_set(
            token=data.validated_data["token"],
            uid=data.validated_data.get("uid"),
            new_password=data.validated_data["newPassword"],
        )
        return Response(status=204)


LANGUAGE_TAG = re.compile(r"^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8})*$")


@extend_schema_field({"type": "string", "maxLength": 35, "pattern": LANGUAGE_TAG.pattern})
class LanguageTagField(StrictCharField):
    """A language tag such as 'en' or 'pt-BR' (checked by the serializer's validate_language)."""


@extend_schema_field({"type": "string", "enum": sorted(zoneinfo.available_timezones())})
class TimeZoneField(StrictCharField):
    """An IANA time zone name (checked by the serializer's validate_timezone)."""


class PreferencesApi(APIView):
    required = {"GET": "", "PUT": ""}

    class InputSerializer(StrictSerializer):
        # Every field is optional: PUT changes the ones given. The theme must exist in the tenant.
        theme = StrictCharField(max_length=100, required=False)
        language = LanguageTagField(max_length=35, required=False)
        timezone = TimeZoneField(max_length=64, required=False)
        itemsPerPage = StrictIntegerField(min_value=1, max_value=100, required=False)
        emailNotifications = StrictBooleanField(required=False)

        def validate_theme(self, value: str) -> str:
            tenant_id = self.context["tenant_id"]
            if not Theme.objects.filter(tenant_id=tenant_id, name=value).exists():
                raise serializers.ValidationError(f"No theme named {value!r}.")
            return value

        def validate_language(self, value: str) -> str:
            if not LANGUAGE_TAG.match(value):
                raise serializers.ValidationError("Must be a language tag such as 'en' or 'pt-BR'.")
            return value

        def validate_timezone(self, value: str) -> str:
            # An unknown zone is a 400.
            if value not in zoneinfo.available_timezones():
                raise serializers.ValidationError(f"Unknown time zone {value!r}.")
            return value

    def get(self, request: AuthenticatedRequest) -> Response:
        return Response(selectors.preferences_of(request.user))

    def put(self, request: AuthenticatedRequest) -> Response:
        data = self.InputSerializer(
            data=request.data, partial=True, context={"tenant_id": request.user.tenant_id}
        )
        data.is_valid(raise_exception=True)
        return Response(services.preferences_update(user=request.user, changes=dict(data.validated_data)))


# --- principals -----------------------------------------------------------------------------------


class PrincipalListCreateApi(APIView):
    required = {"GET": "admin:users", "POST": "admin:users"}

    class InputSerializer(StrictSerializer):
        email = serializers.EmailField(max_length=254)
        displayName = StrictCharField(max_length=200)
        roles = string_list(required=False, default=list)
        kind = serializers.ChoiceField(choices=[User.KIND_HUMAN, User.KIND_AGENT], default=User.KIND_HUMAN)
        password = StrictCharField(max_length=1024, trim_whitespace=False, required=False)

    class FilterSerializer(QuerySerializer):
        search = QueryTextField(trim=True)
        roleFilter = QueryTextField(trim=True, source="role")  # noqa: N815 (the API's spelling)

    @extend_schema(
        parameters=[
            *page_parameters(),
            query("search", TEXT, "part of the email or display name"),
            query("roleFilter", TEXT, "a role name: only principals holding it"),
        ]
    )
    def get(self, request: AuthenticatedRequest) -> Response:
        page = get_page(request.query_params, default_limit=25, max_limit=100)
        filters = self.FilterSerializer(data=request.query_params)
        filters.is_valid(raise_exception=True)
        users, total = selectors.principal_list(
            tenant_id=request.user.member_tenant_id, page=page, **filters.validated_data
        )
        next_url, _ = page_links(request, page, total)
        return Response({"data": [principal_out(u) for u in users], "total": total, "next": next_url})

    @extend_schema(responses={201: OpenApiTypes.OBJECT})
    def post(self, request: AuthenticatedRequest) -> Response:
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        values = data.validated_data
        created = services.principal_create(
            tenant=request.user.member_tenant,
            actor=request.user,
            email=values["email"],
            display_name=values["displayName"],
            role_names=values["roles"],
            kind=values["kind"],
            password=values.get("password"),
        )
        body = principal_out(created.user)
        if created.api_key:
            body["apiKey"] = created.api_key  # shown once; only its hash is stored
        return Response(body, status=201)


class PrincipalUpdateApi(APIView):
    required = {"PUT": "admin:users"}

    class InputSerializer(StrictSerializer):
        displayName = StrictCharField(max_length=200, required=False)
        roles = string_list(required=False)

    def put(self, request: AuthenticatedRequest, principal_id) -> Response:
        user = selectors.principal_get(tenant_id=request.user.member_tenant_id, principal_id=principal_id)
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        updated = services.principal_update(
            user=user,
            actor=request.user,
            display_name=data.validated_data.get("displayName"),
            role_names=data.validated_data.get("roles"),
        )
        return Response(principal_out(updated))


class PrincipalDisableApi(APIView):
    required = {"POST": "admin:users"}

    @extend_schema(responses={204: None})
    def post(self, request: AuthenticatedRequest, principal_id) -> Response:
        user = selectors.principal_get(tenant_id=request.user.member_tenant_id, principal_id=principal_id)
        services.principal_disable(user=user, actor=request.user)
        return Response(status=204)


class PrincipalEnableApi(APIView):
    required = {"POST": "admin:users"}

    @extend_schema(responses={204: None})
    def post(self, request: AuthenticatedRequest, principal_id) -> Response:
        user = selectors.principal_get(tenant_id=request.user.member_tenant_id, principal_id=principal_id)
        services.principal_enable(user=user, actor=request.user)
        return Response(status=204)


# --- roles ----------------------------------------------------------------------------------------

ROLE_NAME = r"^[A-Za-z0-9_.-]+$"


class RoleListCreateApi(APIView):
    required = {"GET": "admin:roles", "POST": "admin:roles"}

    class InputSerializer(StrictSerializer):
        # Strict: a RegexField is a CharField, which turned `"name": 0` into the role "0".
        name = StrictCharField(max_length=100, validators=[RegexValidator(ROLE_NAME)])
        displayName = StrictCharField(max_length=200)
        permissions = string_list()

    @extend_schema(responses=LIST_OF_OBJECTS)
    def get(self, request: AuthenticatedRequest) -> Response:
        return Response([role_out(r) for r in selectors.role_list(tenant_id=request.user.member_tenant_id)])

    @extend_schema(responses={201: OpenApiTypes.OBJECT})
    def post(self, request: AuthenticatedRequest) -> Response:
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        role = services.role_create(
            tenant=request.user.member_tenant,
            actor=request.user,
            name=data.validated_data["name"],
            display_name=data.validated_data["displayName"],
            permissions=data.validated_data["permissions"],
        )
        return Response(role_out(role), status=201)


class RolePermissionsApi(APIView):
    required = {"PUT": "admin:roles"}

    class InputSerializer(StrictSerializer):
        permissions = string_list()

    def put(self, request: AuthenticatedRequest, role_id) -> Response:
        role = selectors.role_get(tenant_id=request.user.member_tenant_id, role_id=role_id)
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        role = services.role_set_permissions(
            role=role, actor=request.user, permissions=data.validated_data["permissions"]
        )
        return Response(role_out(role))


# --- the caller, users and out of office ---------------------------------------------------------


class MeApi(APIView):
    required = {"GET": ""}

    @extend_schema(responses={200: OpenApiTypes.OBJECT})
    def get(self, request: AuthenticatedRequest) -> Response:
        user = request.user
        return Response(
            {
                **user_summary_out(user),
                "tenantId": str(user.member_tenant_id),
                "permissions": sorted(user.get_permission_strings()),
                "teams": [
                    {"id": str(m.team_id), "name": m.team.name, "lead": m.lead}
                    for m in selectors.teams_of(user)
                ],
                "outOfOffice": selectors.out_of_office_of(_fresh(user), now_ms()),
            }
        )


def _fresh(user: User) -> User:
    # The authenticated principal may come from a short-lived cache: absence is read from the row.
    return User.objects.get(pk=user.pk)


class UserDetailApi(APIView):
    # admin:users reads anyone of the tenant; everyone may read themselves.
    required = {"GET": ""}

    @extend_schema(responses={200: OpenApiTypes.OBJECT})
    def get(self, request: AuthenticatedRequest, user_id) -> Response:
        if user_id != request.user.id and not has_permission(
            request.user.get_permission_strings(), "admin:users"
        ):
            raise errors.PermissionDenied("Requires permission admin:users.")
        user = selectors.principal_get(tenant_id=request.user.member_tenant_id, principal_id=user_id)
        return Response({**principal_out(user), "outOfOffice": selectors.out_of_office_of(user, now_ms())})


class OutOfOfficeInput(StrictSerializer):
    # `from` is a Python keyword: the field is declared under another name and renamed below.
    until = serializers.DateTimeField()
    delegateTo = serializers.UUIDField(required=False, allow_null=True, default=None)

    def get_fields(self) -> dict[str, Any]:
        fields = super().get_fields()
        fields["from"] = serializers.DateTimeField()
        return fields


def _set_out_of_office(request: AuthenticatedRequest, user: User) -> Response:
    body = OutOfOfficeInput(data=request.data)
    body.is_valid(raise_exception=True)
    data = body.validated_data
    updated = services.out_of_office_set(
        user=user,
        actor=request.user,
        starts=data["from"],
        until=data["until"],
        delegate_to=data["delegateTo"],
    )
    return Response(selectors.out_of_office_of(updated, now_ms()))


class MyOutOfOfficeApi(APIView):
    required = {"PUT": "", "DELETE": ""}

    @extend_schema(request=OutOfOfficeInput, responses={200: OpenApiTypes.OBJECT})
    def put(self, request: AuthenticatedRequest) -> Response:
        return _set_out_of_office(request, _fresh(request.user))

    @extend_schema(responses={204: None})
    def delete(self, request: AuthenticatedRequest) -> Response:
        services.out_of_office_clear(user=_fresh(request.user), actor=request.user)
        return Response(status=204)


class UserOutOfOfficeApi(APIView):
    required = {"PUT": "admin:users", "DELETE": "admin:users"}

    @extend_schema(request=OutOfOfficeInput, responses={200: OpenApiTypes.OBJECT})
    def put(self, request: AuthenticatedRequest, user_id) -> Response:
        user = selectors.principal_get(tenant_id=request.user.member_tenant_id, principal_id=user_id)
        return _set_out_of_office(request, user)

    @extend_schema(responses={204: None})
    def delete(self, request: AuthenticatedRequest, user_id) -> Response:
        user = selectors.principal_get(tenant_id=request.user.member_tenant_id, principal_id=user_id)
        services.out_of_office_clear(user=user, actor=request.user)
        return Response(status=204)
