from django.urls import path

from casemgmt.webhooks import apis

urlpatterns = [
    path("admin/webhooks/inbound", apis.InboundWebhookListCreateApi.as_view(), name="inbound-webhooks"),
    path(
        "admin/webhooks/inbound/<uuid:webhook_id>",
        apis.InboundWebhookDetailApi.as_view(),
        name="inbound-webhook",
    ),
    # The tenant id in the URL keeps tenants' paths apart (and leaves /webhooks/<name>/... free for
    # fixed receivers such as the orchestrator's callback).
    path("webhooks/<uuid:tenant_id>/<path:path>", apis.WebhookReceiveApi.as_view(), name="webhook-receive"),
]
