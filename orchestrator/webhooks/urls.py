from django.urls import path

from orchestrator.webhooks import apis

urlpatterns = [
    path("webhooks", apis.WebhookListCreateApi.as_view(), name="webhooks"),
    path("webhooks/<str:webhook_id>", apis.WebhookDetailApi.as_view(), name="webhook-detail"),
    path("webhooks/<str:webhook_id>/deliveries", apis.DeliveryListApi.as_view(), name="webhook-deliveries"),
]
