from django.urls import path

from orchestrator.audit import apis

urlpatterns = [
    path("audit", apis.AuditEventListApi.as_view(), name="audit-events"),
    path("audit/verify", apis.AuditVerifyApi.as_view(), name="audit-verify"),
    path("audit/export", apis.AuditExportApi.as_view(), name="audit-export"),
]
