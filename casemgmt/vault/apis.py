"""HTTP operations of the document vault: case documents, case-agnostic uploads, downloads, signed
download links. Thin: parse, authorize, call one service or selector, render with a `*_out`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any
from urllib.parse import quote
from uuid import UUID

from django.conf import settings
from django.http import FileResponse, HttpResponse, HttpResponseRedirect
from django.http.response import HttpResponseBase, HttpResponseRedirectBase
from django.urls import reverse
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.parsers import MultiPartParser
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from casemgmt.accounts.request import AuthenticatedRequest
from casemgmt.cases.selectors import access_case
from casemgmt.vault import openapi, selectors, services
from casemgmt.vault.models import Erasure, blob_key
from casemgmt.vault.storage import presigned_url, vault_storage
from casemgmt.vault.tokens import SignedToken, token_check
from casemgmt.vault.uploads import HashingUploadHandler, require_upload
from shared.api.fields import StrictCharField
from shared.api.openapi import FILE_RESPONSE, errors_also
from shared.api.time import iso

if TYPE_CHECKING:
    from casemgmt.vault.models import Document


class HttpResponseTemporaryRedirect(HttpResponseRedirectBase):
    status_code = 307


def document_out(document: Document) -> dict[str, Any]:
    return {
        "id": str(document.id),
        "caseId": str(document.case_id) if document.case_id else None,
        "filename": document.filename,
        "mimeType": document.mime_type,
        "size": document.size,
        "description": document.description,
        "uploadedAt": iso(document.uploaded_at),
        "uploadedBy": str(document.uploaded_by_id) if document.uploaded_by_id else None,
    }


def signed_link(request: AuthenticatedRequest, document: Document, signed: SignedToken) -> str:
    path = reverse("vault-signed-download", args=[document.id])
    return request.build_absolute_uri(f"{path}?token={quote(signed.token, safe='')}")


def document_upload_out(
    request: AuthenticatedRequest, document: Document, signed: SignedToken
) -> dict[str, Any]:
    return {
        **document_out(document),
        "contentHash": document.content_hash,
        "signedUrl": signed_link(request, document, signed),
    }


def signed_url_out(request: AuthenticatedRequest, document: Document, signed: SignedToken) -> dict[str, Any]:
    return {"url": signed_link(request, document, signed), "expiresAt": iso(signed.expires_at)}


def content_response(document: Document, *, redirect: type[HttpResponseRedirectBase]) -> HttpResponseBase:
    """A redirect to the store's own presigned URL when it has one, else the bytes themselves."""
    key = blob_key(document.blob_id)
    url = presigned_url(key=key, filename=document.filename, mime_type=document.mime_type)
    if url is not None:
        return redirect(url)
    response = FileResponse(
        vault_storage().open(key, "rb"),
        as_attachment=True,
        filename=document.filename,
        content_type=document.mime_type,
    )
    response["X-Content-Type-Options"] = "nosniff"
    response["Content-Length"] = str(document.size)
    return response


class UploadInputSerializer(serializers.Serializer):
    file = serializers.FileField(allow_empty_file=True, use_url=False)
    description = StrictCharField(required=False, allow_blank=True, default="", max_length=2000)

    def to_internal_value(self, data: Any) -> Any:
        # A form field given twice is refused rather than silently read as its last part.
        names = self.fields.keys()  # noqa: SIM118 - the stubs type iterating a BindingDict as giving fields
        repeated = sorted(k for k in names if hasattr(data, "getlist") and len(data.getlist(k)) > 1)
        if repeated:
            raise serializers.ValidationError({k: ["Give this field once."] for k in repeated})
        return super().to_internal_value(data)


def parse_upload(
    request: AuthenticatedRequest, input_serializer: type[serializers.Serializer]
) -> dict[str, Any]:
    """Reads the multipart body through the hashing handler (streamed, size-capped, hashed)."""
    request._request.upload_handlers = [
        HashingUploadHandler(request._request, max_bytes=settings.VAULT_MAX_UPLOAD_BYTES)
    ]
    body = input_serializer(data=request.data)
    body.is_valid(raise_exception=True)
    data = dict(body.validated_data)
    data["file"] = require_upload(request.FILES)
    return data


class CaseDocumentListCreateApi(APIView):
    parser_classes = [MultiPartParser]
    # Listing needs vault:read (vault:download is not enough).
    required = {"GET": "vault:read", "POST": "vault:upload"}

    class InputSerializer(UploadInputSerializer):
        pass

    @extend_schema(operation_id="case_documents_list", responses=openapi.DocumentOut(many=True))
    def get(self, request: AuthenticatedRequest, case_id: UUID) -> Response:
        case = access_case(user=request.user, case_id=case_id)
        return Response([document_out(d) for d in selectors.document_list(case=case)])

    @extend_schema(responses={201: openapi.DocumentUploadOut})
    def post(self, request: AuthenticatedRequest, case_id: UUID) -> Response:
        case = access_case(user=request.user, case_id=case_id)
        data = parse_upload(request, self.InputSerializer)
        document = services.document_upload(
            user=request.user, upload=data["file"], case=case, description=data["description"]
        )
        signed = services.document_signed_url(user=request.user, document=document)
        return Response(document_upload_out(request, document, signed), status=201)


class CaseDocumentDetailApi(APIView):
    required = {"GET": "vault:read", "DELETE": "vault:delete"}

    @extend_schema(responses={307: None})
    def get(self, request: AuthenticatedRequest, case_id: UUID, document_id: UUID) -> HttpResponse:
        case = access_case(user=request.user, case_id=case_id)
        document = selectors.access_document(user=request.user, document_id=document_id, case=case)
        signed = services.document_signed_url(user=request.user, document=document)
        return HttpResponseTemporaryRedirect(signed_link(request, document, signed))

    @extend_schema(responses={204: None})
    def delete(self, request: AuthenticatedRequest, case_id: UUID, document_id: UUID) -> Response:
        case = access_case(user=request.user, case_id=case_id)
        document = selectors.access_document(user=request.user, document_id=document_id, case=case)
        services.document_delete(user=request.user, document=document)
        return Response(status=204)


class VaultUploadApi(APIView):
    parser_classes = [MultiPartParser]
    required = {"POST": "vault:upload"}

    class InputSerializer(UploadInputSerializer):
        pass

    @extend_schema(responses={201: openapi.DocumentUploadOut})
    def post(self, request: AuthenticatedRequest) -> Response:
        data = parse_upload(request, self.InputSerializer)
        document = services.document_upload(
            user=request.user, upload=data["file"], description=data["description"]
        )
        signed = services.document_signed_url(user=request.user, document=document)
        return Response(document_upload_out(request, document, signed), status=201)


class VaultDownloadApi(APIView):
    required = {"GET": "vault:read"}

    @extend_schema(responses={**FILE_RESPONSE, 307: None})
    def get(self, request: AuthenticatedRequest, document_id: UUID) -> HttpResponseBase:
        document = selectors.access_document(user=request.user, document_id=document_id)
        services.document_record_download(actor=str(request.user.id), document=document, via="api")
        return content_response(document, redirect=HttpResponseTemporaryRedirect)


class VaultDocumentDeleteApi(APIView):
    required = {"DELETE": "vault:delete"}

    @extend_schema(responses={204: None})
    def delete(self, request: AuthenticatedRequest, document_id: UUID) -> Response:
        document = selectors.access_document(user=request.user, document_id=document_id)
        services.document_delete(user=request.user, document=document)
        return Response(status=204)


class VaultSignedUrlApi(APIView):
    OutputSerializer = openapi.SignedUrlOut
    required = {"POST": "vault:read"}

    def post(self, request: AuthenticatedRequest, document_id: UUID) -> Response:
        document = selectors.access_document(user=request.user, document_id=document_id)
        signed = services.document_signed_url(user=request.user, document=document)
        return Response(signed_url_out(request, document, signed))


class VaultSignedDownloadApi(APIView):
    """Public: the signed token in the query string is the only credential."""

    authentication_classes: list[Any] = []
    required = {"GET": None}

    @extend_schema(
        responses={**FILE_RESPONSE, 302: None},
        extensions=errors_also(403),
        parameters=[OpenApiParameter("token", str, required=True, description="signed download token")],
    )
    def get(self, request: Request, document_id: UUID) -> HttpResponseBase:
        claims = token_check(token=request.query_params.get("token", ""), document_id=document_id)
        document = selectors.document_for_token(claims=claims)
        services.document_record_download(actor=claims.issued_by, document=document, via="signed_url")
        return content_response(document, redirect=HttpResponseRedirect)


# --- erasure ---------------------------------------------------------------------------------


def erasure_accepted_out(erasure: Erasure) -> dict[str, Any]:
    return {"id": str(erasure.id), "status": erasure.status}


def erasure_out(erasure: Erasure) -> dict[str, Any]:
    return {
        "id": str(erasure.id),
        "userId": str(erasure.subject_id),
        "scope": erasure.scope,
        "status": erasure.status,
        "reason": erasure.reason,
        "requestedAt": iso(erasure.requested_at),
        "completedAt": iso(erasure.completed_at),
        "report": erasure.report if erasure.status == Erasure.COMPLETED else None,
    }


class _ErasureRequestApi(APIView):
    """202 with the queued job; the subclass names the scope and whether a reason is required."""

    scope: str
    InputSerializer: type[serializers.Serializer]

    @extend_schema(responses={202: openapi.ErasureAcceptedOut}, extensions=errors_also(404))
    def post(self, request: AuthenticatedRequest) -> Response:
        body = self.InputSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        erasure = services.erasure_request(
            user=request.user,
            subject_id=body.validated_data["userId"],
            reason=body.validated_data["reason"],
            scope=self.scope,
        )
        return Response(erasure_accepted_out(erasure), status=202)


class ErasureCreateApi(_ErasureRequestApi):
    """Erases a principal's personal data, documents and audit payloads; runs as a background job."""

    required = {"POST": "admin:erasure"}
    scope = Erasure.FULL

    class InputSerializer(serializers.Serializer):
        userId = serializers.UUIDField()
        reason = StrictCharField(max_length=2000)


class ErasureDetailApi(APIView):
    OutputSerializer = openapi.ErasureOut
    required = {"GET": "admin:erasure"}

    def get(self, request: AuthenticatedRequest, erasure_id: UUID) -> Response:
        return Response(erasure_out(selectors.access_erasure(user=request.user, erasure_id=erasure_id)))


class VaultErasureCreateApi(_ErasureRequestApi):
    """Erases a principal's documents only."""

    required = {"POST": "vault:delete"}
    scope = Erasure.DOCUMENTS

    class InputSerializer(serializers.Serializer):
        userId = serializers.UUIDField()
        reason = StrictCharField(max_length=2000, required=False, allow_blank=True, default="")


class VaultErasureDetailApi(APIView):
    OutputSerializer = openapi.ErasureOut
    required = {"GET": "vault:delete"}

    def get(self, request: AuthenticatedRequest, erasure_id: UUID) -> Response:
        erasure = selectors.access_erasure(user=request.user, erasure_id=erasure_id, scope=Erasure.DOCUMENTS)
        return Response(erasure_out(erasure))
