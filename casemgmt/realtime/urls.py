from django.urls import path

from casemgmt.realtime import apis

urlpatterns = [
    path("ws/ticket", apis.WebSocketTicketApi.as_view(), name="ws-ticket"),
]
