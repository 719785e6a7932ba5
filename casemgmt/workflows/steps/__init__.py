"""Step types, keyed by `type`. Adding a type is one module here that defines a `StepType` and
registers it (see `task.py`); nothing else in the engine names a type.
"""

from __future__ import annotations

from typing import Any, Protocol


class StepType(Protocol):
    type: str

    def check(self, step: dict[str, Any], *, field: str, tenant_id: Any) -> list[dict[str, str]]:
        """Publish-time problems of this step's type-specific configuration."""

    def activate(self, *, row: Any, step: dict[str, Any], case: Any, actor: str) -> None:
        """Called inside the activating transaction after the row became `active`."""


REGISTRY: dict[str, StepType] = {}


def register(step_type: StepType) -> StepType:
    REGISTRY[step_type.type] = step_type
    return step_type


def load() -> None:
    from casemgmt.workflows.steps import agent, task  # noqa: F401  (registration on import)
