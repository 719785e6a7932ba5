from django.urls import path

from casemgmt.realtime import apis

urlpatterns = [
    path("ws", apis.websocket_over_http, name="ws"),
    path("ws/ticket", apis.WebSocketTicketApi.as_view(), name="ws-ticket"),
]
