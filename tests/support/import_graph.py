"""The import graph of one of our packages, read from the source (no import is run): which module
imports which, and which app imports which. Used by the layer tests of both services.

Imports inside functions count: they run (later), so they are dependencies like any other and no
way around a loop. Imports under `if TYPE_CHECKING:` never run; callers say whether to count them
(an app order counts them: a type named from an upper app is still a dependency)."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FIRST_PARTY = ("casemgmt", "orchestrator", "shared")


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def modules(package: str) -> dict[str, Path]:
    """Every module of the package (migrations left out), by dotted name."""
    return {
        module_name(path): path for path in (ROOT / package).rglob("*.py") if "migrations" not in path.parts
    }


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def targets(node: ast.Import | ast.ImportFrom, known: dict[str, Path]) -> set[str]:
    """The first-party modules an import statement loads (`from pkg import mod` loads pkg.mod)."""
    if isinstance(node, ast.Import):
        return {alias.name for alias in node.names if alias.name in known}
    if node.level or not node.module or node.module.split(".")[0] not in FIRST_PARTY:
        return set()
    found = {f"{node.module}.{alias.name}" for alias in node.names} & known.keys()
    return found or ({node.module} & known.keys())


def imports(tree: ast.Module, *, type_checking: bool) -> list[ast.Import | ast.ImportFrom]:
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


def graph(package: str, *, type_checking: bool = False) -> dict[str, set[str]]:
    """module -> the modules of the same package it imports."""
    known = modules(package)
    found: dict[str, set[str]] = {}
    for name, path in known.items():
        tree = ast.parse(path.read_text(), filename=str(path))
        loaded = (targets(node, known) for node in imports(tree, type_checking=type_checking))
        found[name] = set().union(*loaded) - {name}
    return found


def app_of(module: str, apps: set[str]) -> str | None:
    """`pkg.app.x` -> `app` when it is one of `apps`."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[1] in apps else None


def app_graph(module_graph: dict[str, set[str]], apps: set[str]) -> dict[str, set[str]]:
    """app -> the other apps its modules import."""
    found: dict[str, set[str]] = {app: set() for app in apps}
    for module, deps in module_graph.items():
        app = app_of(module, apps)
        if app is not None:
            found[app] |= {dep_app for dep in deps if (dep_app := app_of(dep, apps)) not in (None, app)}
    return found


def upward(graph: dict[str, set[str]], layers: list[tuple[str, ...]]) -> list[tuple[str, str]]:
    """Imports of an app in the same layer or a higher one (`layers` bottom first)."""
    level = {app: index for index, layer in enumerate(layers) for app in layer}
    return sorted((app, dep) for app, deps in graph.items() for dep in deps if level[dep] >= level[app])


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one node (Tarjan)."""
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
