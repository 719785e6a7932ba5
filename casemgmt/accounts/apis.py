from __future__ import annotations

from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from casemgmt.accounts import services
from shared.api.time import iso


def user_summary(user) -> dict:
    return {"id": str(user.id), "email": user.email, "displayName": user.display_name, "roles": user.role_names}


class LoginApi(APIView):
    authentication_classes: list = []
    required = {"POST": None}

    class InputSerializer(serializers.Serializer):
        email = serializers.CharField(max_length=254)
        password = serializers.CharField(max_length=1024, trim_whitespace=False)

    def post(self, request: Request) -> Response:
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        issued, user = services.auth_login(**data.validated_data)
        return Response({"token": issued.token, "expiresAt": iso(issued.expires_at), "user": user_summary(user)})


class LogoutApi(APIView):
    required = {"POST": ""}

    def post(self, request: Request) -> Response:
        services.auth_logout(claims=request.auth)
        return Response(status=204)
