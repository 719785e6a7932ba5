from django.urls import path

from casemgmt.audit import apis

urlpatterns = [
    path("audit", apis.AuditListApi.as_view(), name="audit-list"),
    path("audit/verify-chain", apis.AuditVerifyChainApi.as_view(), name="audit-verify-chain"),
    path("audit/export", apis.AuditExportApi.as_view(), name="audit-export"),
    path("audit/checkpoints", apis.AuditCheckpointListApi.as_view(), name="audit-checkpoints"),
    path("audit/checkpoints/keys", apis.AuditCheckpointKeysApi.as_view(), name="audit-checkpoint-keys"),
    path("activity", apis.ActivityApi.as_view(), name="activity"),
]
