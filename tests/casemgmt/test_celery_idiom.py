"""One way to queue Celery work in the case service: each app's `tasks.py` holds its tasks, and its
`queue.py` alone sends them, by task name, so the services that queue work never import the tasks
that call them (no services <-> tasks import loop, not even through an import inside a function)."""

from __future__ import annotations

import ast
from pathlib import Path

import casemgmt

ROOT = Path(casemgmt.__file__).parent
SENDS = (".delay(", ".apply_async(", "send_task(")


def _misplaced() -> list[str]:
    found = []
    for path in ROOT.rglob("*.py"):
        if "migrations" in path.parts:
            continue
        text = path.read_text()
        if path.name != "tasks.py" and "shared_task" in text:
            found.append(f"{path.relative_to(ROOT)}: defines a task")
        if path.name != "queue.py" and any(word in text for word in SENDS):
            found.append(f"{path.relative_to(ROOT)}: sends a task")
    return found


def test_tasks_are_defined_in_tasks_modules_and_sent_by_name_from_queue_modules():
    assert _misplaced() == []


def _imports_a_tasks_module(tree: ast.Module) -> bool:
    """Anywhere in the module, inside functions too."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import) and any(a.name.endswith(".tasks") for a in node.names):
            return True
        if (
            isinstance(node, ast.ImportFrom)
            and node.module
            and node.module.startswith("casemgmt")
            and (node.module.endswith(".tasks") or any(a.name == "tasks" for a in node.names))
        ):
            return True
    return False


def test_nothing_but_a_worker_imports_a_tasks_module():
    """Task modules are loaded by Celery's autodiscovery; code that imports one to send a task
    is what made the services <-> tasks loops."""
    importers = [
        str(path.relative_to(ROOT))
        for path in ROOT.rglob("*.py")
        if "migrations" not in path.parts and _imports_a_tasks_module(ast.parse(path.read_text()))
    ]
    assert importers == []


def test_the_check_sees_an_import_inside_a_function():
    assert _imports_a_tasks_module(ast.parse("def f():\n    from casemgmt.accounts.tasks import x\n"))
