"""The orchestrator's routes without the documentation page: a deploy whose UI is missing."""

from django.urls import include, path

urlpatterns = [
    path("api/", include("orchestrator.system.urls")),
]
