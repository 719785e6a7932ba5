"""Writes of the workflows app: definitions (`workflows`), human tasks (`tasks`), agent steps (`agents`)."""

from casemgmt.workflows.services.tasks import tasks_escalate_overdue, tasks_release_for_user

__all__ = ["tasks_escalate_overdue", "tasks_release_for_user"]
