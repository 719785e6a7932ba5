from django.contrib import admin
from django.urls import include, path
from drf_spectacular.views import SpectacularJSONAPIView

from shared.web.docs import RedocDocsView

# Django tries the routes in this order on every request and no two apps share a route, so the
# hottest ones (case reads, lists and creation) come first: they matched after ~35 others before.
urlpatterns = [
    path("", include("casemgmt.cases.urls")),
    path("", include("casemgmt.ops.urls")),
    path("", include("casemgmt.accounts.urls")),
    path("", include("casemgmt.tenancy.urls")),
    path("", include("casemgmt.audit.urls")),
    path("", include("casemgmt.vault.urls")),
    path("", include("casemgmt.workflows.urls")),
    path("", include("casemgmt.prompts.urls")),
    path("", include("casemgmt.reports.urls")),
    path("", include("casemgmt.connectors.urls")),
    path("", include("casemgmt.dags.urls")),
    path("", include("casemgmt.webhooks.urls")),
    path("", include("casemgmt.realtime.urls")),
    path("", include("casemgmt.console.urls")),
    path("openapi.json", SpectacularJSONAPIView.as_view(), name="openapi"),
    path("docs", RedocDocsView.as_view(url_name="openapi"), name="docs"),
    path("admin/", admin.site.urls),
    path("", include("django_prometheus.urls")),
]

handler400 = "shared.api.views.handler400"
handler403 = "shared.api.views.handler403"
handler404 = "shared.api.views.handler404"
handler500 = "shared.api.views.handler500"
