"""The case service's modules import each other without loops, its apps import only the apps below
them (LAYERS), and every import made inside a function says why it is there.

Imports inside functions count: they run (later), so they are dependencies like any other and no
longer a way around a loop. Only `if TYPE_CHECKING:` imports, which never run, are left out of the
module loops; the app order counts them too (a type named from an upper app is still a dependency)."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = "casemgmt"
FIRST_PARTY = ("casemgmt", "shared")

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
    # Backups put back what a restore needs of every app below (the report role's grants).
    ("ops",),
    ("console",),
]
APPS = {app: level for level, layer in enumerate(LAYERS) for app in layer}
# Imports that still point upward, to be removed: creating, updating and closing a case starts and
# halts its workflow and sends the case's outbound webhooks from cases.services (one SQL statement
# reads the case number, the workflow and the webhook configuration together). Each entry fails the
# test below once the import is gone, so the list only shrinks.
KNOWN_UPWARD: set[tuple[str, str]] = {("cases", "workflows"), ("cases", "connectors")}


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules() -> dict[str, Path]:
    return {
        _module_name(path): path for path in (ROOT / PACKAGE).rglob("*.py") if "migrations" not in path.parts
    }


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _targets(node: ast.Import | ast.ImportFrom, known: dict[str, Path]) -> set[str]:
    """The first-party modules an import statement loads (`from pkg import mod` loads pkg.mod)."""
    if isinstance(node, ast.Import):
        return {alias.name for alias in node.names if alias.name in known}
    if node.level or not node.module or node.module.split(".")[0] not in FIRST_PARTY:
        return set()
    found = {f"{node.module}.{alias.name}" for alias in node.names} & known.keys()
    return found or ({node.module} & known.keys())


def _imports(tree: ast.Module, *, type_checking: bool) -> list[ast.Import | ast.ImportFrom]:
    """Every import statement, wherever it is (module, class and function bodies), and those under
    `if TYPE_CHECKING:` only when `type_checking`."""
    found: list[ast.Import | ast.ImportFrom] = []
    pending: list[ast.AST] = [tree]
    while pending:
        node = pending.pop()
        if isinstance(node, ast.Import | ast.ImportFrom):
            found.append(node)
        elif isinstance(node, ast.If) and _is_type_checking(node) and not type_checking:
            pending += node.orelse
        else:
            pending += ast.iter_child_nodes(node)
    return found


def _graph(*, type_checking: bool = False) -> dict[str, set[str]]:
    known = _modules()
    graph: dict[str, set[str]] = {}
    for name, path in known.items():
        tree = ast.parse(path.read_text(), filename=str(path))
        targets = (_targets(node, known) for node in _imports(tree, type_checking=type_checking))
        graph[name] = set().union(*targets) - {name}
    return graph


def _app(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[1] in APPS else None


def _app_graph(module_graph: dict[str, set[str]]) -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {app: set() for app in APPS}
    for module, deps in module_graph.items():
        app = _app(module)
        if app is not None:
            graph[app] |= {dep_app for dep in deps if (dep_app := _app(dep)) not in (None, app)}
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for dep in sorted(graph.get(node, ())):
            if dep not in index:
                visit(dep)
                low[node] = min(low[node], low[dep])
            elif dep in on_stack:
                low[node] = min(low[node], index[dep])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_no_import_loops_between_case_service_modules():
    assert _cycles(_graph()) == []


def test_the_graph_counts_imports_inside_functions():
    tree = ast.parse(
        "def f():\n    import casemgmt.cases.models\nif TYPE_CHECKING:\n    import casemgmt.cases.apis\n"
    )
    known = _modules()
    assert {t for node in _imports(tree, type_checking=False) for t in _targets(node, known)} == {
        "casemgmt.cases.models"
    }


def test_every_app_has_its_layer():
    packages = {path.parent.name for path in (ROOT / PACKAGE).glob("*/__init__.py")} - {"config"}
    assert packages == set(APPS)


def test_apps_import_only_the_apps_below_them():
    upward = sorted(
        (app, dep)
        for app, deps in _app_graph(_graph(type_checking=True)).items()
        for dep in deps
        if APPS[dep] >= APPS[app] and (app, dep) not in KNOWN_UPWARD
    )
    assert upward == []


def test_known_upward_imports_still_exist():
    graph = _app_graph(_graph(type_checking=True))
    assert {(app, dep) for app, dep in KNOWN_UPWARD if dep not in graph[app]} == set()


def test_no_import_loops_between_apps():
    graph = _app_graph(_graph(type_checking=True))
    for app, dep in KNOWN_UPWARD:
        graph[app].discard(dep)
    assert _cycles(graph) == []


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
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


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
                if isinstance(node, ast.Import | ast.ImportFrom) and _targets(node, known):
                    if not any(why in _comment_above(lines, node.lineno) for why in REASONS):
                        unexplained.append(f"{name}:{node.lineno}")
    assert unexplained == []
