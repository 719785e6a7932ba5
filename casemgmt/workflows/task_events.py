"""Who hears about a human task's events (assigned, escalated, SLA breached).

The notifications app sits above workflows (it reads steps and sends through the connectors' email
transport), so workflows cannot import it: it registers its notifier here from its
`AppConfig.ready()`. A notifier runs in the transaction that caused the event, as a direct call
would, and may write rows and queue work on commit.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from casemgmt.accounts.models import User
    from casemgmt.workflows.models import CaseStep

ASSIGNED, ESCALATED, SLA_BREACHED = "assigned", "escalated", "sla_breached"


class Notifier(Protocol):
    def __call__(self, *, row: CaseStep, event: str, recipient: User | None, actor: str) -> object: ...


NOTIFIERS: list[Notifier] = []


def notifier_register(notifier: Notifier) -> None:
    if notifier not in NOTIFIERS:
        NOTIFIERS.append(notifier)


def task_notify(*, row: CaseStep, event: str, recipient: User | None, actor: str) -> None:
    for notifier in NOTIFIERS:
        notifier(row=row, event=event, recipient=recipient, actor=actor)
