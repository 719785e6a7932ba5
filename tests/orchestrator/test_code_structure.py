"""How the orchestrator's modules hang together: no import loops, Celery tasks defined in each app's
tasks.py and sent by name only from its queue.py, and every import inside a function says why."""

from __future__ import annotations

import ast
from pathlib import Path

import orchestrator

ROOT = Path(orchestrator.__file__).parent
PACKAGE = ROOT.parent


def _modules() -> dict[str, Path]:
    found = {}
    for path in ROOT.rglob("*.py"):
        if "migrations" in path.parts:
            continue
        name = ".".join(path.relative_to(PACKAGE).with_suffix("").parts).removesuffix(".__init__")
        found[name] = path
    return found


def _module_level_imports(path: Path) -> set[str]:
    """Names imported when the module loads (not inside functions, not under TYPE_CHECKING)."""
    names: set[str] = set()
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            continue
        for child in ast.walk(node) if not isinstance(node, (ast.FunctionDef, ast.ClassDef)) else []:
            if isinstance(child, ast.Import):
                names.update(alias.name for alias in child.names)
            elif isinstance(child, ast.ImportFrom) and child.module:
                names.add(child.module)
                names.update(f"{child.module}.{alias.name}" for alias in child.names)
    return names


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    cycles, done, path = [], set(), []

    def visit(node: str) -> None:
        path.append(node)
        for nxt in sorted(graph[node]):
            if nxt in path:
                cycles.append(path[path.index(nxt) :] + [nxt])
            elif nxt not in done:
                visit(nxt)
        path.pop()
        done.add(node)

    for node in sorted(graph):
        if node not in done:
            visit(node)
    return cycles


def test_no_import_loops():
    modules = _modules()
    graph = {
        name: {dep for dep in _module_level_imports(path) if dep in modules and dep != name}
        for name, path in modules.items()
    }
    assert _cycles(graph) == []


def test_the_cycle_finder_finds_a_loop():
    assert _cycles({"a": {"b"}, "b": {"a"}}) == [["a", "b", "a"]]


SENDS = (".delay(", ".apply_async(", "send_task(")
# The runs package has its own wake-up publisher (dispatch.py), restructured separately.
CELERY_IDIOM_EXEMPT = {"runs"}


def test_celery_tasks_are_defined_in_tasks_modules_and_sent_by_name_from_queue_modules():
    """Each app's `tasks.py` holds its Celery tasks; its `queue.py` alone sends them, by name, so
    the services that queue work never import the tasks that call them."""
    misplaced = []
    for path in ROOT.rglob("*.py"):
        app = path.relative_to(ROOT).parts[0]
        if app in CELERY_IDIOM_EXEMPT or "migrations" in path.parts:
            continue
        text = path.read_text()
        if path.name != "tasks.py" and "shared_task" in text:
            misplaced.append(f"{path.relative_to(ROOT)}: defines a task")
        if path.name != "queue.py" and any(word in text for word in SENDS):
            misplaced.append(f"{path.relative_to(ROOT)}: sends a task")
    assert misplaced == []


def test_every_import_inside_a_function_says_why():
    unexplained = []
    for name, path in _modules().items():
        lines = path.read_text().splitlines()
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            for child in ast.walk(node):
                if isinstance(child, (ast.Import, ast.ImportFrom)):
                    line = lines[child.lineno - 1]
                    above = lines[child.lineno - 2].strip()
                    if "#" not in line and not above.startswith("#"):
                        unexplained.append(f"{name}:{child.lineno}")
    assert unexplained == []
