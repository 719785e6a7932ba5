"""Which environment variables orchestrator data may give a command.

A command's environment is built from data: a schedule's `env_vars` and `parameters` (chosen by
whoever schedules, an operator), and task defaults, DAG task parameters, contexts and parameter sets
(written by an admin, but combined with any task by whoever schedules). Some variables change what
a shell, the dynamic loader, libc or a language runtime runs before or instead of the command
(`BASH_ENV` is sourced by every non-interactive bash, `LD_PRELOAD` loads a library into every
program, `PATH` picks which program a name means). None of them may come from that data, whoever
wrote it: an operator would otherwise run commands no admin defined, and an admin never needs them
there (the command itself can set them). Only names are refused, so no value is ever logged.

The rule is checked where values enter (the API's 400) and again by the agent just before it
starts the command (rows written before the rule existed), so it lives here, in one place.

A task definition may also declare `allowed_env`: then scheduling may set only those names for it.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from typing import Any, Protocol

from shared.api.problems import Problems

MAX_NAME_CHARS = 128
MAX_VALUE_CHARS = 32 * 1024
NAME_RE = re.compile(rf"^[A-Za-z_][A-Za-z0-9_]{{0,{MAX_NAME_CHARS - 1}}}$")

# Names matched exactly (environment names are case-sensitive on the agents, which are Linux).
REFUSED_NAMES = frozenset(
    {
        # the shell: which program a name runs, start-up files, options, traced-line prompts
        "PATH", "ENV", "IFS", "CDPATH", "GLOBIGNORE", "SHELLOPTS", "PS1", "PS2", "PS4",
        "PROMPT_COMMAND", "POSIXLY_CORRECT", "INPUTRC", "HISTFILE", "SHELL",
        # where programs find their dotfiles (~/.gitconfig, ~/.ssh/config can run programs)
        "HOME", "XDG_CONFIG_HOME", "XDG_CONFIG_DIRS",
        # libc: character-set modules (shared libraries), locales, resolver, time zones
        "GCONV_PATH", "GLIBC_TUNABLES", "LOCPATH", "NLSPATH", "HOSTALIASES", "LOCALDOMAIN",
        "RES_OPTIONS", "TZDIR",
        # runtimes that load code named by a variable
        "NODE_OPTIONS", "NODE_PATH", "JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS", "JDK_JAVA_OPTIONS",
        "CLASSPATH", "PHPRC", "PHP_INI_SCAN_DIR", "TCLLIBPATH", "GOFLAGS", "R_PROFILE",
        "R_PROFILE_USER", "R_ENVIRON", "R_ENVIRON_USER", "R_LIBS", "R_LIBS_USER",
        "MAKEFLAGS", "GNUMAKEFLAGS", "MFLAGS",
        # TLS libraries: engines and providers are shared libraries; a key log leaks sessions
        "OPENSSL_CONF", "OPENSSL_ENGINES", "OPENSSL_MODULES", "SSLKEYLOGFILE",
        # programs that tools run, and tools' own configuration files
        "EDITOR", "VISUAL", "PAGER", "SSH_ASKPASS", "SUDO_ASKPASS", "CURL_HOME", "WGETRC",
    }
)  # fmt: skip
# Families refused whole: BASH_ENV, BASHOPTS, BASH_FUNC_<name>%% (exported functions) and the rest
# of bash's; the dynamic loaders; Python, Perl (PERL5OPT, PERL5LIB, PERLLIB, PERL5DB), Ruby and Lua;
# git (GIT_SSH_COMMAND, GIT_CONFIG_*, GIT_EXEC_PATH run programs); and the orchestrator's own names
# (ORCH_RUN_ID and the like are set by the agent, and its settings never reach a command).
REFUSED_PREFIXES = ("BASH", "LD_", "DYLD_", "PYTHON", "PERL", "RUBY", "LUA_", "GIT_", "ORCH_")


class DefinesAllowedEnv(Protocol):
    @property
    def allowed_env(self) -> list[str] | None: ...


def is_refused(name: str) -> bool:
    return name in REFUSED_NAMES or name.startswith(REFUSED_PREFIXES)


def name_problem(name: str) -> str | None:
    """Why `name` may not be set from orchestrator data, or None when it may."""
    if not isinstance(name, str) or not NAME_RE.match(name):
        return f"names must be 1-{MAX_NAME_CHARS} letters, digits or '_', not starting with a digit"
    if is_refused(name):
        return (
            f"{name} may not be set: it changes how a shell, the loader or an interpreter starts "
            "(a command that needs it sets it itself)"
        )
    return None


def check_entry(problems: Problems, name: Any, value: Any, field: str) -> str | None:
    """The value as text when `name` may be set to it; otherwise a problem for `field`."""
    problem = name_problem(name)
    if problem is None:
        if isinstance(value, bool) or not isinstance(value, (str, int, float)):
            problem = "must be a string"
        elif len(text := str(value)) > MAX_VALUE_CHARS:
            problem = f"values must be at most {MAX_VALUE_CHARS} characters"
        elif "\x00" in text:
            problem = "values must not contain NUL characters"
        else:
            return text
    problems.add(field, problem)
    return None


def check_map(problems: Problems, value: Any, field: str, *, qualified: bool = False) -> dict[str, str]:
    """An object of environment names to string values (numbers kept as their text), each entry
    checked by `check_entry`. `qualified`: keys may also be `<task_id>.<NAME>` (NAME is checked)."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        problems.add(field, "must be an object of string values")
        return {}
    out: dict[str, str] = {}
    for key, item in value.items():
        name = str(key).rpartition(".")[2] if qualified else key
        text = check_entry(problems, name, item, f"{field}.{key}")
        if text is not None:
            out[key] = text
    return out


def check_allowed_env(problems: Problems, value: Any, field: str = "allowed_env") -> list[str] | None:
    """A task's `allowed_env`: null (not declared) or a list of names that may be set; sorted and
    without repeats so that an equal list is an unchanged definition."""
    if value is None:
        return None
    if not isinstance(value, list):
        problems.add(field, "must be an array of environment names or null")
        return None
    for index, name in enumerate(value):
        problem = name_problem(name)
        if problem is not None:
            problems.add(f"{field}[{index}]", problem)
    return sorted({name for name in value if isinstance(name, str)})


def check_allowed(
    problems: Problems,
    *,
    env_vars: Mapping[str, str],
    per_task: Mapping[str, Mapping[str, str]],
    definitions: Mapping[str, DefinesAllowedEnv],
) -> None:
    """A task that declares `allowed_env` takes from scheduling (env_vars, which reach every task
    of the run, and its own parameters) only those names; a task that declares nothing takes any
    name the rule above lets through."""
    for task_id, task in sorted(definitions.items()):
        if task.allowed_env is None:
            continue
        allowed = set(task.allowed_env)
        for name in sorted(set(env_vars) - allowed):
            problems.add(f"env_vars.{name}", f"task {task_id} does not accept {name} (allowed_env)")
        for name in sorted(set(per_task.get(task_id, {})) - allowed):
            problems.add(f"parameters.{name}", f"task {task_id} does not accept {name} (allowed_env)")


def check_stored(*, env_vars: Mapping[str, Any], parameters: Mapping[str, Any]) -> None:
    """A rerun reuses its original's env_vars and parameters: those stored before this rule existed
    are checked again (400, as when scheduling; a rerun with reset_params drops them)."""
    problems = Problems()
    check_map(problems, dict(env_vars), "env_vars")
    check_map(problems, dict(parameters), "parameters", qualified=True)
    for entry in problems.errors:
        entry["error"] += "; the original run set it (rerun with reset_params to leave it out)"
    problems.raise_if_any()


def split_refused(env: Mapping[str, Any]) -> tuple[dict[str, str], list[str]]:
    """(what may reach a command, the names left out): the agent's last check, for rows written
    before the rule existed. Names only are reported, never values."""
    safe: dict[str, str] = {}
    refused: list[str] = []
    for name, value in env.items():
        if check_entry(Problems(), name, value, "") is None:
            refused.append(str(name))
        else:
            safe[name] = str(value)
    return safe, sorted(refused)


def fingerprint(values: Mapping[str, Any]) -> dict[str, Any]:
    """For the audit trail: the names, and a SHA-256 of the canonical JSON of the whole map (names
    and values), which shows whether a run was given some values without recording them."""
    if not values:
        return {"names": [], "sha256": None}
    canonical = json.dumps(dict(values), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return {"names": sorted(values), "sha256": hashlib.sha256(canonical.encode()).hexdigest()}


def audit_changes(*, env_vars: Mapping[str, Any], parameters: Mapping[str, Any]) -> dict[str, Any]:
    return {"env_vars": fingerprint(env_vars), "parameters": fingerprint(parameters)}
