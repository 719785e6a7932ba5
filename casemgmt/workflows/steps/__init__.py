"""Step types, keyed by `type`. Adding a type is one module that defines a `StepType` and calls
`register` (see `task.py`, `llm.py`); `load()` imports every module here, and nothing else in the
engine names a type. A type whose machinery lives in an app above workflows is registered from that
app's `AppConfig.ready()` (`casemgmt.connectors.step`, `casemgmt.dags.step`). Automated types
finish their steps from a worker with `casemgmt.workflows.services.steps.step_succeed` /
`step_fail` (which honour `onFailure`).
"""

from __future__ import annotations

import importlib
import pkgutil
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from casemgmt.cases.models import Case
    from casemgmt.workflows.models import CaseStep


class StepType(Protocol):
    type: str

    def check(self, step: dict[str, Any], *, field: str, tenant_id: Any) -> list[dict[str, str]]:
        """Publish-time problems of this step's type-specific configuration."""

    def activate(self, *, row: CaseStep, step: dict[str, Any], case: Case, actor: str) -> None:
        """Called inside the activating transaction after the row became `active`."""


REGISTRY: dict[str, StepType] = {}


def register(step_type: StepType) -> StepType:
    REGISTRY[step_type.type] = step_type
    return step_type


_loaded = False


def load() -> None:
    """Imports every module of this package; each registers its type on import. Once per process:
    listing the package's folder on every call cost a case creation a directory scan."""
    global _loaded
    if _loaded:
        return
    for module in pkgutil.iter_modules(__path__):
        importlib.import_module(f"{__name__}.{module.name}")
    _loaded = True
