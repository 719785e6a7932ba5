"""README's production commands, deploy/Procfile and deploy/compose.yaml start the same processes
with the same commands and environment (case web, worker and beat; orchestrator web and agent; the
migrations of both). No orchestrator beat: agents run its recovery sweep themselves."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
PROCESSES = {"case-web", "case-worker", "case-beat", "orch-web", "orch-agent"}


def normalised(command: str, env: dict[str, str] | None = None) -> tuple[dict[str, str], tuple[str, ...]]:
    """(environment set on the command line or for the process, arguments), with shell defaults
    (`${X:-8}`) resolved to their default and the image's /app/ working directory dropped."""
    command = re.sub(r"\$\{\w+:-([^}]*)\}", r"\1", command.split("  #")[0])
    words = shlex.split(command)
    assigned = dict(env or {})
    while words and re.fullmatch(r"[A-Z_][A-Z0-9_]*=.*", words[0]):
        name, _, value = words.pop(0).partition("=")
        assigned[name] = value
    return assigned, tuple(word.removeprefix("/app/") for word in words)


def procfile() -> dict[str, tuple[dict[str, str], tuple[str, ...]]]:
    lines = (ROOT / "deploy" / "Procfile").read_text().splitlines()
    entries = dict(line.split(":", 1) for line in lines if line.strip() and not line.startswith("#"))
    return {name: normalised(command.strip()) for name, command in entries.items()}


def compose() -> dict[str, tuple[dict[str, str], tuple[str, ...]]]:
    services = yaml.safe_load((ROOT / "deploy" / "compose.yaml").read_text())["services"]
    found = {}
    for name, service in services.items():
        if "command" in service:
            env = {k: str(v) for k, v in service.get("environment", {}).items() if k.startswith("ORCH_DB_")}
            found[name] = normalised(service["command"], env)
    return found


def readme_commands() -> list[tuple[dict[str, str], tuple[str, ...]]]:
    text = (ROOT / "README.md").read_text()
    block = text.split("## Production path", 1)[1].split("```sh", 1)[1].split("```", 1)[0]
    commands = []
    for line in block.replace("\\\n", " ").splitlines():  # continued lines joined
        env_, words = normalised(line.strip())
        if words and words[0] in {"uvicorn", "daphne", "celery", "python"}:
            commands.append((env_, words))
    return commands


def test_procfile_compose_and_readme_start_the_same_processes():
    procs = procfile()
    assert set(procs) == PROCESSES | {"release"}
    composed = compose()
    readme = readme_commands()
    for name in sorted(PROCESSES):
        assert composed[name] == procs[name], name
        assert procs[name] in readme, f"README's production commands lack {name}: {procs[name]}"
    long_running = [c for c in readme if "migrate" not in c[1] and "create_tenant" not in c[1]]
    assert len(long_running) == len(PROCESSES), long_running


def test_each_start_runs_both_migrations_and_no_orchestrator_beat():
    release = " ".join(procfile()["release"][1])
    composed = compose()
    for manage in ("manage_case.py", "manage_orch.py"):
        assert f"{manage} migrate" in release
        assert any(words[:3] == ("python", manage, "migrate") for _, words in composed.values())
        assert any(words[:3] == ("python", manage, "migrate") for _, words in readme_commands())
    everything = [procfile().values(), composed.values(), readme_commands()]
    assert not any("orchestrator.config" in w and "beat" in w for group in everything for _, w in group)
