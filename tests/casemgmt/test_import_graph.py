"""The case service's modules import each other without loops, its apps import only the apps below
them (LAYERS), and every import made inside a function says why it is there.

Imports inside functions count: they run (later), so they are dependencies like any other and no
longer a way around a loop. Only `if TYPE_CHECKING:` imports, which never run, are left out of the
module loops; the app order counts them too (a type named from an upper app is still a dependency)."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.support import import_graph
from tests.support.import_graph import ROOT, cycles

PACKAGE = "casemgmt"

# The apps from the bottom up; apps in one layer do not import each other. `config` (settings, URLs,
# ASGI, Celery) is not an app and sits above them all. pyproject.toml's import-linter contract holds
# the same order.
LAYERS: list[tuple[str, ...]] = [
    ("tenancy",),
    ("audit",),
    ("accounts",),
    ("templating",),
    ("prompts", "realtime"),
    ("cases",),
    ("workflows",),
    ("vault",),
    ("connectors",),
    ("dags", "notifications", "webhooks", "reports"),
    ("ops",),  # backup and restore reach into every app's data (restore re-grants the report role)
    ("console",),
]
APPS = {app: level for level, layer in enumerate(LAYERS) for app in layer}


def _modules() -> dict[str, Path]:
    return import_graph.modules(PACKAGE)


def _graph(*, type_checking: bool = False) -> dict[str, set[str]]:
    return import_graph.graph(PACKAGE, type_checking=type_checking)


def _app_graph(module_graph: dict[str, set[str]]) -> dict[str, set[str]]:
    return import_graph.app_graph(module_graph, set(APPS))


def test_no_import_loops_between_case_service_modules():
    assert cycles(_graph()) == []


def test_the_graph_counts_imports_inside_functions():
    tree = ast.parse(
        "def f():\n    import casemgmt.cases.models\nif TYPE_CHECKING:\n    import casemgmt.cases.apis\n"
    )
    known = _modules()
    assert {
        t
        for node in import_graph.imports(tree, type_checking=False)
        for t in import_graph.targets(node, known)
    } == {"casemgmt.cases.models"}


def test_every_app_has_its_layer():
    packages = {path.parent.name for path in (ROOT / PACKAGE).glob("*/__init__.py")} - {"config"}
    assert packages == set(APPS)


def test_apps_import_only_the_apps_below_them():
    upward = sorted(
        (app, dep)
        for app, deps in _app_graph(_graph(type_checking=True)).items()
        for dep in deps
        if APPS[dep] >= APPS[app]
    )
    assert upward == []


def test_no_import_loops_between_apps():
    assert cycles(_app_graph(_graph(type_checking=True))) == []


REASONS = ("app loading", "import-time", "import time")


def _comment_above(lines: list[str], lineno: int) -> str:
    """The comment lines just above line `lineno` (1-based), lower-cased and joined."""
    found: list[str] = []
    index = lineno - 2
    while index >= 0 and lines[index].strip().startswith("#"):
        found.insert(0, lines[index].strip().lstrip("#").strip().lower())
        index -= 1
    return " ".join(found)


def test_the_check_finds_a_loop():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_function_level_imports_say_why():
    """An import inside a function is kept only to spare import-time cost or for Django's app
    loading order (models cannot load before the app registry is ready); the comment just above
    says which."""
    known = _modules()
    unexplained = []
    for name, path in known.items():
        source = path.read_text()
        lines = source.splitlines()
        for func in ast.walk(ast.parse(source)):
            if not isinstance(func, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            for node in ast.walk(func):
                explained = isinstance(node, ast.Import | ast.ImportFrom) and any(
                    why in _comment_above(lines, node.lineno) for why in REASONS
                )
                if (
                    isinstance(node, ast.Import | ast.ImportFrom)
                    and import_graph.targets(node, known)
                    and not explained
                ):
                    unexplained.append(f"{name}:{node.lineno}")
    assert unexplained == []
