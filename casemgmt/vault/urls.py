from django.urls import path

from casemgmt.vault import apis

urlpatterns = [
    path("cases/<uuid:case_id>/documents", apis.CaseDocumentListCreateApi.as_view(), name="case-documents"),
    path(
        "cases/<uuid:case_id>/documents/<uuid:document_id>",
        apis.CaseDocumentDetailApi.as_view(),
        name="case-document-detail",
    ),
    path("vault/upload", apis.VaultUploadApi.as_view(), name="vault-upload"),
    path("vault/download/<uuid:document_id>", apis.VaultDownloadApi.as_view(), name="vault-download"),
    path("vault/signed-url/<uuid:document_id>", apis.VaultSignedUrlApi.as_view(), name="vault-signed-url"),
    path(
        "vault/signed/<uuid:document_id>", apis.VaultSignedDownloadApi.as_view(), name="vault-signed-download"
    ),
    path("vault/erasure", apis.VaultErasureCreateApi.as_view(), name="vault-erasure"),
    path(
        "vault/erasure/<uuid:erasure_id>", apis.VaultErasureDetailApi.as_view(), name="vault-erasure-detail"
    ),
    path("admin/erasure", apis.ErasureCreateApi.as_view(), name="erasure"),
    path("admin/erasure/<uuid:erasure_id>", apis.ErasureDetailApi.as_view(), name="erasure-detail"),
    path("vault/<uuid:document_id>", apis.VaultDocumentDeleteApi.as_view(), name="vault-document"),
]
