from django.contrib import admin
from django.urls import include, path
from drf_spectacular.views import SpectacularJSONAPIView

from shared.web.docs import docs_urls

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
    *docs_urls(schema_url_name="openapi"),
    path("admin/", admin.site.urls),
]

handler400 = "shared.api.views.handler400"
handler403 = "casemgmt.console.errors.handler403"
handler404 = "casemgmt.console.errors.handler404"
handler500 = "casemgmt.console.errors.handler500"
