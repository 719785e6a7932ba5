from django.contrib import admin
from django.urls import include, path
from drf_spectacular.views import SpectacularJSONAPIView

from orchestrator.system.apis import PrometheusMetricsApi
from shared.web.docs import docs_urls

urlpatterns = [
    path("api/", include("orchestrator.system.urls")),
    path("api/", include("orchestrator.definitions.urls")),
    path("api/", include("orchestrator.runs.urls")),
    path("api/", include("orchestrator.agents.urls")),
    path("api/", include("orchestrator.events.urls")),
    path("api/", include("orchestrator.webhooks.urls")),
    path("api/", include("orchestrator.schedules.urls")),
    path("api/", include("orchestrator.audit.urls")),
    path("openapi.json", SpectacularJSONAPIView.as_view(), name="openapi"),
    *docs_urls(schema_url_name="openapi"),
    path("admin/", admin.site.urls),
    path("", include("orchestrator.console.urls")),
    path("", include("orchestrator.security.urls")),  # OIDC login routes, when configured
    path("metrics", PrometheusMetricsApi.as_view(), name="prometheus-django-metrics"),
]

handler400 = "shared.api.views.handler400"
handler403 = "shared.api.views.handler403"
handler404 = "shared.api.views.handler404"
handler500 = "shared.api.views.handler500"
