from django.urls import path

from casemgmt.connectors import apis

urlpatterns = [
    path("connectors", apis.ConnectorListApi.as_view(), name="connector-list"),
    path("connectors/invocations", apis.InvocationListApi.as_view(), name="connector-invocations"),
    path("connectors/deliveries", apis.DeliveryListApi.as_view(), name="connector-deliveries"),
    path(
        "connectors/deliveries/<str:delivery_id>/replay",
        apis.DeliveryReplayApi.as_view(),
        name="connector-delivery-replay",
    ),
    path("connectors/<str:key>/config", apis.ConnectorConfigApi.as_view(), name="connector-config"),
    path(
        "connectors/<str:key>/actions/<str:action>/test",
        apis.ConnectorTestApi.as_view(),
        name="connector-test",
    ),
]
