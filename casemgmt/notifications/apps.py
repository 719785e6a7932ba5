from django.apps import AppConfig


class NotificationsConfig(AppConfig):
    name = "casemgmt.notifications"
    label = "notifications"
