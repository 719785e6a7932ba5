from django.urls import path

from casemgmt.ops import apis

urlpatterns = [
    path("health", apis.health, name="health"),
    path("healthz", apis.healthz, name="healthz"),
    path("readyz", apis.readyz, name="readyz"),
    path("metrics", apis.metrics, name="prometheus-django-metrics"),
]
