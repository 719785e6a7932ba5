from django.urls import path

from orchestrator.audit import apis

urlpatterns = [
    path("audit", apis.AuditEventListApi.as_view(), name="audit-events"),
    path("audit/verify", apis.AuditVerifyApi.as_view(), name="audit-verify"),
    path("audit/export", apis.AuditExportApi.as_view(), name="audit-export"),
    path("audit/checkpoints", apis.AuditCheckpointListApi.as_view(), name="audit-checkpoints"),
    path("audit/checkpoints/keys", apis.AuditCheckpointKeysApi.as_view(), name="audit-checkpoint-keys"),
]
