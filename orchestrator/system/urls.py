from django.urls import path

from orchestrator.system import apis

urlpatterns = [
    path("health", apis.HealthApi.as_view(), name="health"),
    path("status", apis.StatusApi.as_view(), name="status"),
    path("metrics", apis.MetricsApi.as_view(), name="metrics"),
    path("definitions/plan", apis.DefinitionsPlanApi.as_view(), name="definitions-plan"),
]
