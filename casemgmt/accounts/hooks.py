"""What apps above accounts do when a principal is disabled, in the disabling transaction.

Accounts sits below the feature apps and cannot import them; an app that holds work for a user
(workflows: its open human tasks) registers a hook here from its `AppConfig.ready()`. A hook runs
inside `principal_disable`'s transaction, as a direct call would.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from casemgmt.accounts.models import User


class DisableHook(Protocol):
    def __call__(self, *, user: User, actor: str) -> object: ...


DISABLE_HOOKS: list[DisableHook] = []


def on_principal_disable(hook: DisableHook) -> None:
    if hook not in DISABLE_HOOKS:
        DISABLE_HOOKS.append(hook)
