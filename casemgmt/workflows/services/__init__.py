"""Writes of the workflows app: definitions (`workflows`), human tasks (`inbox`), automated steps
(`steps`, `llm_steps`)."""

from casemgmt.workflows.services.inbox import tasks_escalate_overdue, tasks_release_for_user

__all__ = ["tasks_escalate_overdue", "tasks_release_for_user"]
