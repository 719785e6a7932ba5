from django.apps import AppConfig
from django.utils.translation import gettext_lazy

from casemgmt.workflows import task_events


class NotificationsConfig(AppConfig):
    name = "casemgmt.notifications"
    verbose_name = gettext_lazy("Notifications")
    label = "notifications"

    def ready(self) -> None:
        # App loading order: the services import models, which cannot load before the registry is ready.
        from casemgmt.notifications.services import task_notify

        # Workflows sits below notifications: its task events reach the notifier through this.
        task_events.notifier_register(task_notify)
