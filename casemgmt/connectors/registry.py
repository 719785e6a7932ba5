"""The connector registry: one module per connector in `casemgmt.connectors.builtins`.

Each module defines `CONNECTOR`, an instance of a `Connector` subclass. Discovery imports every
module of the package once; adding a connector is adding a module, nothing else names it.
"""

from __future__ import annotations

import importlib
import pkgutil
from functools import cache

from django.core.exceptions import ImproperlyConfigured

from casemgmt.connectors import builtins
from casemgmt.connectors.base import INPUT_TYPES, Connector


@cache
def connectors() -> dict[str, Connector]:
    found: dict[str, Connector] = {}
    for module_info in sorted(pkgutil.iter_modules(builtins.__path__), key=lambda m: m.name):
        module = importlib.import_module(f"{builtins.__name__}.{module_info.name}")
        connector = getattr(module, "CONNECTOR", None)
        if not isinstance(connector, Connector):
            raise ImproperlyConfigured(f"{module.__name__} must define CONNECTOR, a Connector instance")
        _check(connector, found)
        found[connector.key] = connector
    return found


def _check(connector: Connector, found: dict[str, Connector]) -> None:
    if not connector.key or connector.key in found:
        raise ImproperlyConfigured(f"connector key {connector.key!r} is empty or defined twice")
    for action in connector.actions.values():
        for name, spec in action.inputs.items():
            if spec.type not in INPUT_TYPES:
                raise ImproperlyConfigured(f"{connector.key}.{action.name}.{name}: unknown type {spec.type}")


def connector_get(key: str) -> Connector | None:
    return connectors().get(key)
