"""Workflow engine entry points that the cases app calls inside its own transactions.

The step registry, activation, conditions and task handling live in this app (issue #5).
"""

from __future__ import annotations

from typing import Any


def workflow_start(*, case: Any, actor: Any) -> None:
    """Creates the case's steps from its bound workflow version and activates the first ones."""
    if case.workflow_version_id is None:
        return
    raise NotImplementedError("workflow engine: implemented by the workflows work (issue #5)")


def workflow_halt(*, case: Any, actor: Any) -> None:
    """Closing or cancelling a case halts its workflow: no further activation, open tasks closed."""
    return None
