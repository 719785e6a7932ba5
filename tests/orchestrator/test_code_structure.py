"""How the orchestrator's modules hang together: no import loops, Celery tasks defined in each app's
tasks.py and sent by name only from its queue.py, every import inside a function says why it is
there, and the modules of orchestrator.runs import only downwards, in the layers its import-linter
contract states."""

from __future__ import annotations

import ast
import tomllib
from pathlib import Path

import orchestrator
from tests.support import import_graph

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
    """Between any two orchestrator modules, imports inside functions counted (not a way around)."""
    assert import_graph.cycles(import_graph.graph("orchestrator")) == []


def test_the_cycle_finder_finds_a_loop():
    assert _cycles({"a": {"b"}, "b": {"a"}}) == [["a", "b", "a"]]


SENDS = (".delay(", ".apply_async(", "send_task(")
# The runs package has its own wake-up publisher (runs/wakeups.py): it sends its one task by name,
# in batches, below the layers that queue runs.
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


RUNS = "orchestrator.runs"
# Outside the layers: the app's configuration, and the reaper, a standalone script (run as
# `python -I -S`) that imports nothing of ours.
UNLAYERED = {"apps", "reaper"}


def _runs_layers() -> list[set[str]]:
    """orchestrator.runs's layers, top first, as its import-linter contract in pyproject.toml states
    them (`a | b`: independent siblings)."""
    config = tomllib.loads((PACKAGE / "pyproject.toml").read_text())["tool"]["importlinter"]
    (contract,) = [c for c in config["contracts"] if c.get("containers") == [RUNS]]
    return [{name.strip() for name in layer.split("|")} for layer in contract["layers"]]


def _all_imports(path: Path) -> set[str]:
    """Every name an import statement anywhere in the file loads: module level, inside functions
    and classes, under TYPE_CHECKING. A lazy import is still an import."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


def _full_graph() -> dict[str, set[str]]:
    modules = _modules()
    return {
        name: {dep for dep in _all_imports(path) if dep in modules and dep != name}
        for name, path in modules.items()
    }


def _runs_graph(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    """runs module -> the runs modules it reaches: directly, or through modules of other apps
    (runs.x -> events.services -> runs.y counts as runs.x -> runs.y), by short name."""

    def short(name: str) -> str:
        return name.removeprefix(f"{RUNS}.")

    runs = {name for name in graph if name.startswith(f"{RUNS}.")}
    reached: dict[str, set[str]] = {}
    for name in runs:
        found, stack, seen = set(), list(graph[name]), set()
        while stack:
            dep = stack.pop()
            if dep in seen:
                continue
            seen.add(dep)
            if dep in runs:
                found.add(short(dep))
            elif dep != RUNS:
                stack.extend(graph[dep])
        reached[short(name)] = found - {short(name)}
    return reached


def _layer_violations(graph: dict[str, set[str]], layers: list[set[str]]) -> list[str]:
    """Imports of a module's own layer (a sibling) or of a layer above it."""
    level = {name: i for i, layer in enumerate(layers) for name in layer}
    return sorted(
        f"{name} imports {dep}"
        for name, deps in graph.items()
        for dep in deps
        if name in level and dep in level and level[dep] <= level[name]
    )


def test_runs_modules_import_only_the_layers_below_them():
    assert _layer_violations(_runs_graph(_full_graph()), _runs_layers()) == []


def test_every_runs_module_has_a_layer():
    runs = {name.removeprefix(f"{RUNS}.") for name in _modules() if name.startswith(f"{RUNS}.")}
    assert runs - UNLAYERED == set().union(*_runs_layers())


def test_no_import_loops_between_runs_modules_counting_imports_inside_functions():
    assert _cycles(_runs_graph(_full_graph())) == []


def test_the_runs_package_docstring_states_the_layer_order():
    doc = ast.get_docstring(ast.parse((ROOT / "runs" / "__init__.py").read_text())) or ""
    stated = [{n.strip() for n in line.split("|")} for line in doc.splitlines() if line.startswith("    ")]
    assert stated == _runs_layers()


def test_the_layer_check_finds_an_upward_and_a_sibling_import():
    layers = [{"top"}, {"left", "right"}, {"bottom"}]
    graph = {"top": {"left"}, "left": {"right", "bottom"}, "right": set(), "bottom": {"top"}}
    assert _layer_violations(graph, layers) == ["bottom imports top", "left imports right"]


def test_the_runs_graph_sees_imports_inside_functions_and_through_other_apps(tmp_path):
    lazy = tmp_path / "lazy.py"
    lazy.write_text("def f():\n    from orchestrator.runs import tasks\n")
    assert "orchestrator.runs.tasks" in _all_imports(lazy)
    graph = {f"{RUNS}.state": {"orchestrator.events.services"}, "orchestrator.events.services": {f"{RUNS}.tasks"},
             f"{RUNS}.tasks": set()}  # fmt: skip
    assert _runs_graph(graph)["state"] == {"tasks"}


# --- The apps: each imports only the apps below it, imports inside functions and under
# TYPE_CHECKING included. The order is pyproject.toml's import-linter contract APP_LAYERS_ID
# (`lint-imports` checks it too); `config` (settings, URLs, ASGI, Celery) sits above every app.

APP_LAYERS_ID = "orchestrator-app-layers"
FOUNDATION = [("audit",), ("security",), ("definitions",)]


def _app_layers() -> list[tuple[str, ...]]:
    """The contract's layers, bottom first (`a | b`: siblings, which import neither the other)."""
    config = tomllib.loads((PACKAGE / "pyproject.toml").read_text())["tool"]["importlinter"]
    (contract,) = [c for c in config["contracts"] if c.get("id") == APP_LAYERS_ID]
    assert contract["containers"] == ["orchestrator"]
    return [tuple(name.strip() for name in layer.split("|")) for layer in reversed(contract["layers"])]


def _orchestrator_app_graph() -> dict[str, set[str]]:
    apps = {app for layer in _app_layers() for app in layer}
    return import_graph.app_graph(import_graph.graph("orchestrator", type_checking=True), apps)


def test_every_orchestrator_app_has_its_layer():
    packages = {path.parent.name for path in ROOT.glob("*/__init__.py")}
    assert packages == {app for layer in _app_layers() for app in layer}


def test_orchestrator_apps_import_only_the_apps_below_them():
    assert import_graph.upward(_orchestrator_app_graph(), _app_layers()) == []


def test_no_import_loops_between_orchestrator_apps_counting_imports_inside_functions():
    assert import_graph.cycles(_orchestrator_app_graph()) == []


def test_foundation_apps_are_the_bottom_layers():
    """audit, security and definitions import no feature app (runs, events, webhooks, schedules,
    agents, system) and not the console: bootstrap and demo commands live in the console."""
    assert _app_layers()[: len(FOUNDATION)] == FOUNDATION


def test_the_app_checks_find_an_upward_import_a_sibling_import_and_a_lazy_loop(tmp_path):
    layers = [("bottom",), ("left", "right"), ("top",)]
    graph = {"bottom": {"top"}, "left": {"right", "bottom"}, "right": set(), "top": {"left"}}
    assert import_graph.upward(graph, layers) == [("bottom", "top"), ("left", "right")]
    assert import_graph.cycles(graph) == [["bottom", "left", "top"]]
    tree = ast.parse("def f():\n    from orchestrator.runs import state\n")
    known = import_graph.modules("orchestrator")
    found = {
        t
        for node in import_graph.imports(tree, type_checking=False)
        for t in import_graph.targets(node, known)
    }
    assert found == {"orchestrator.runs.state"}
