"""Who reads the outbox. Events sits below the apps that consume it (webhooks), so it imports none
of them: a consumer registers here, from its `AppConfig.ready()`, which event types it subscribes
to. An event no consumer subscribes to is written as dispatched already (see services).

The SQL form is read when the agents' single statements are built (once, as their modules load),
so asking for it before every app is ready is an error rather than SQL that leaves a consumer out.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from django.apps import apps
from django.core.exceptions import AppRegistryNotReady


@dataclass(frozen=True)
class Consumer:
    name: str
    subscribed_types: Callable[[], set[str]]  # the event types it subscribes to now
    # PostgreSQL: an expression true when it subscribes to the type the given SQL expression names
    subscribed_sql: Callable[[str], str]


CONSUMERS: dict[str, Consumer] = {}


def register(consumer: Consumer) -> None:
    CONSUMERS[consumer.name] = consumer


def subscribed_event_types() -> set[str]:
    """The event types at least one consumer subscribes to."""
    return set().union(*(consumer.subscribed_types() for consumer in CONSUMERS.values()))


def subscribed_sql(event_type_sql: str) -> str:
    if not apps.ready:
        raise AppRegistryNotReady("the outbox's consumers register when the apps are ready")
    found = [f"({consumer.subscribed_sql(event_type_sql)})" for consumer in CONSUMERS.values()]
    return " OR ".join(found) or "FALSE"
