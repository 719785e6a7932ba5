from django.urls import path

from casemgmt.dags import apis

urlpatterns = [
    path(
        "webhooks/orchestrator/<uuid:tenant_id>",
        apis.OrchestratorCallbackApi.as_view(),
        name="orchestrator-callback",
    ),
]
