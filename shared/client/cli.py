"""`caseflow`: the command line of both services, over their HTTP APIs (docs/definitions-as-code.md).

    caseflow orch runs list|show|trigger|cancel|rerun|logs [--follow]
    caseflow orch definitions diff DIR [--prune]
    caseflow case cases list|show|create
    caseflow case tasks inbox|claim|complete

Where and as whom: the environment (CASEFLOW_ORCH_URL, CASEFLOW_ORCH_API_KEY, CASEFLOW_CASE_URL,
CASEFLOW_CASE_TOKEN) over a TOML config file (CASEFLOW_CONFIG, default
~/.config/caseflow/config.toml) with `[orch] url, api_key` and `[case] url, token`.

Exit codes a script can test: 0 done; 1 `diff --exit-code` found changes; 2 usage error; 3 the
service refused (an HTTP error; its message on stderr); 4 the service could not be reached or the
configuration is missing; 5 the run failed or was cancelled (`trigger --wait`, `logs --follow`).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import tomllib
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, TextIO

from shared.client.base import ApiError
from shared.client.case import CaseClient
from shared.client.orchestrator import TERMINAL, OrchestratorClient
from shared.definitions.files import definition_files
from shared.definitions.plan import has_changes, render

OK, CHANGES, USAGE, API_ERROR, UNREACHABLE, RUN_FAILED = 0, 1, 2, 3, 4, 5
RUN_COLUMNS = ["run_id", "dag_id", "status", "start_time", "end_time", "completed_tasks", "failed_tasks"]


class Usage(Exception):
    """A usage error found after parsing (a missing setting, a malformed --param)."""


class Unconfigured(Exception):
    pass


# --- configuration and output ------------------------------------------------------------------


def _environment(service: str) -> dict[str, str | None]:
    return {
        "orch": {
            "url": os.environ.get("CASEFLOW_ORCH_URL"),
            "api_key": os.environ.get("CASEFLOW_ORCH_API_KEY"),
        },
        "case": {"url": os.environ.get("CASEFLOW_CASE_URL"), "token": os.environ.get("CASEFLOW_CASE_TOKEN")},
    }[service]


def settings(service: str, config_path: str | None) -> dict[str, str]:
    """`url` and the credential of `service` (orch or case): environment first, then the file."""
    path = Path(
        config_path or os.environ.get("CASEFLOW_CONFIG") or Path.home() / ".config/caseflow/config.toml"
    )
    values: dict[str, str] = {}
    if path.is_file():
        section = tomllib.loads(path.read_text(encoding="utf-8")).get(service, {})
        values.update({k: str(v) for k, v in section.items()})
    values.update({key: value for key, value in _environment(service).items() if value})
    if not values.get("url"):
        raise Unconfigured(
            f"no {service} URL: set CASEFLOW_{service.upper()}_URL or url in [{service}] of {path}"
        )
    return values


def orch_client(args: argparse.Namespace) -> OrchestratorClient:
    found = settings("orch", args.config)
    return OrchestratorClient(found["url"], found.get("api_key", ""))


def case_client(args: argparse.Namespace) -> CaseClient:
    found = settings("case", args.config)
    return CaseClient(found["url"], found.get("token", ""))


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def table(rows: Sequence[Mapping[str, Any]], columns: list[str], out: TextIO) -> None:
    cells = [[_cell(row.get(c)) for c in columns] for row in rows]
    widths = [max([len(c)] + [len(r[i]) for r in cells]) for i, c in enumerate(columns)]
    for line in [columns, *cells]:
        out.write(
            "  ".join(text.ljust(width) for text, width in zip(line, widths, strict=True)).rstrip() + "\n"
        )


def emit(args: argparse.Namespace, value: Any, columns: list[str] | None = None, rows: Any = None) -> None:
    """JSON as the service sent it (`--output json`), else a table of `rows` or key: value lines."""
    if args.output == "json":
        args.out.write(json.dumps(value, indent=2, ensure_ascii=False) + "\n")
    elif columns is not None:
        table(rows if rows is not None else value, columns, args.out)
    else:
        for key, item in value.items():
            if not isinstance(item, list | dict):
                args.out.write(f"{key}: {_cell(item)}\n")


def _json_arg(text: str, name: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise Usage(f"{name} must be a JSON object: {exc}") from None
    if not isinstance(value, dict):
        raise Usage(f"{name} must be a JSON object")
    return value


def _params(pairs: list[str]) -> dict[str, str]:
    parameters = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep or not name:
            raise Usage(f"--param takes NAME=VALUE, not {pair!r}")
        parameters[name] = value
    return parameters


# --- orch runs ---------------------------------------------------------------------------------


def runs_list(args: argparse.Namespace) -> int:
    page = orch_client(args).runs_list(status=args.status, dag_id=args.dag, limit=args.limit)
    emit(args, page, RUN_COLUMNS, page["runs"])
    return OK


def runs_show(args: argparse.Namespace) -> int:
    run = orch_client(args).run_get(args.run_id)
    emit(args, run)
    if args.output != "json":
        args.out.write("\n")
        table(run.get("tasks", []), ["task_id", "task_run_id", "status", "start_time", "end_time"], args.out)
    return OK


def _outcome(status: str) -> int:
    return OK if status == "completed" else RUN_FAILED


def runs_trigger(args: argparse.Namespace) -> int:
    client = orch_client(args)
    target = "task" if args.task else "dag"
    scheduled = client.schedule(target, args.target, run_id=args.run_id, parameters=_params(args.param))
    if not args.wait and not args.follow:
        emit(args, scheduled)
        return OK
    run_id = scheduled["run_id"]
    if args.output != "json":
        args.out.write(f"run_id: {run_id}\n")
    if args.follow:
        return follow_logs(client, run_id, args)
    while True:
        run = client.run_get(run_id, include_tasks=False)
        if run["status"] in TERMINAL:
            emit(args, run)
            return _outcome(run["status"])
        time.sleep(args.interval)


def runs_cancel(args: argparse.Namespace) -> int:
    emit(args, orch_client(args).run_cancel(args.run_id))
    return OK


def runs_rerun(args: argparse.Namespace) -> int:
    emit(args, orch_client(args).run_rerun(args.run_id, failed_only=args.failed_only))
    return OK


def follow_logs(client: OrchestratorClient, run_id: str, args: argparse.Namespace) -> int:
    """Prints each task run's new log lines (`task_id | line`) as they are written, polling every
    `--interval` seconds until the run has ended and its logs are read to the end; the exit code
    says how it ended."""
    printed: dict[str, int] = {}  # task run -> lines printed so far
    while True:
        run = client.run_get(run_id, include_tasks=True)
        ended = run["status"] in TERMINAL  # read before the logs: nothing is written after the end
        for task in run.get("tasks", []):
            if task["start_time"] is None:
                continue
            lines = client.task_logs(task["task_run_id"])["logs"].splitlines()
            for line in lines[printed.get(task["task_run_id"], 0) :]:
                args.out.write(f"{task['task_id']} | {line}\n")
            printed[task["task_run_id"]] = len(lines)
        args.out.flush()
        if ended:
            args.out.write(f"run {run_id} {run['status']}\n")
            return _outcome(run["status"])
        time.sleep(args.interval)


def runs_logs(args: argparse.Namespace) -> int:
    client = orch_client(args)
    if args.follow:
        return follow_logs(client, args.run_id, args)
    run = client.run_get(args.run_id, include_tasks=True, include_logs=True)
    for task in run.get("tasks", []):
        for line in (task.get("logs") or "").splitlines():
            args.out.write(f"{task['task_id']} | {line}\n")
    return OK


# --- orch definitions --------------------------------------------------------------------------


def definitions_diff(args: argparse.Namespace) -> int:
    folder = Path(args.dir)
    if not folder.exists():
        raise Usage(f"{folder}: no such folder")
    root = folder if folder.is_dir() else folder.parent
    files = [
        {"name": str(p.relative_to(root)), "content": p.read_text(encoding="utf-8")}
        for p in definition_files(folder)
    ]
    plan = orch_client(args).definitions_plan(files, prune=args.prune)
    if args.output == "json":
        emit(args, plan)
    else:
        args.out.write(render(plan, verbose=args.verbose) + "\n")
    return CHANGES if args.exit_code and has_changes(plan) else OK


# --- case --------------------------------------------------------------------------------------


def cases_list(args: argparse.Namespace) -> int:
    page = case_client(args).cases_list(status=args.status, limit=args.limit)
    emit(
        args, page, ["id", "caseNumber", "caseTypeKey", "displayName", "status", "currentStep"], page["data"]
    )
    return OK


def cases_show(args: argparse.Namespace) -> int:
    emit(args, case_client(args).case_get(args.case_id))
    return OK


def cases_create(args: argparse.Namespace) -> int:
    data = _json_arg(args.data, "--data")
    emit(args, case_client(args).case_create(case_type=args.type, data=data, title=args.title))
    return OK


def tasks_inbox(args: argparse.Namespace) -> int:
    page = case_client(args).inbox(status=args.status, limit=args.limit)
    emit(args, page, ["caseId", "stepId", "stepName", "caseNumber", "status", "dueAt"], page["data"])
    return OK


def tasks_claim(args: argparse.Namespace) -> int:
    emit(args, case_client(args).task_claim(args.case_id, args.step_id))
    return OK


def tasks_complete(args: argparse.Namespace) -> int:
    data = _json_arg(args.data, "--data")
    emit(args, case_client(args).task_complete(args.case_id, args.step_id, data=data, outcome=args.outcome))
    return OK


# --- the parser ----------------------------------------------------------------------------------


def _common() -> argparse.ArgumentParser:
    # The global options, accepted after the command too (`caseflow orch runs list --output json`).
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "--output",
        choices=["table", "json"],
        default=argparse.SUPPRESS,
        help="Output format (default table).",
    )
    common.add_argument("--config", default=argparse.SUPPRESS, help="The config file.")
    return common


COMMON = _common()


def _command(group: Any, name: str, handler: Callable[[argparse.Namespace], int], text: str) -> Any:
    parser = group.add_parser(name, help=text, description=text, parents=[COMMON])
    parser.set_defaults(handler=handler)
    return parser


def _group(parser: Any, name: str, text: str) -> Any:
    sub = parser.add_parser(name, help=text, description=text)
    return sub.add_subparsers(dest=f"{name}_command", required=True, metavar="COMMAND")


def _orch_parser(services: Any) -> None:
    orch = _group(services, "orch", "The orchestrator: runs and definitions.")
    runs = _group(orch, "runs", "Runs of DAGs and tasks.")
    p = _command(runs, "list", runs_list, "List runs, newest first.")
    p.add_argument("--status", help="Only runs in this status.")
    p.add_argument("--dag", help="Only runs of this DAG.")
    p.add_argument("--limit", type=int, default=50, help="At most this many (default 50).")
    p = _command(runs, "show", runs_show, "A run and its task runs.")
    p.add_argument("run_id")
    p = _command(runs, "trigger", runs_trigger, "Schedule a run of a DAG (or, with --task, of one task).")
    p.add_argument("target", help="The DAG id (the task id with --task).")
    p.add_argument("--task", action="store_true", help="TARGET is a task, not a DAG.")
    p.add_argument(
        "--param", action="append", default=[], metavar="NAME=VALUE", help="A run parameter (repeatable)."
    )
    p.add_argument("--run-id", help="The run's id (generated when absent).")
    p.add_argument("--wait", action="store_true", help="Wait for the run to end; exit 5 unless it completed.")
    p.add_argument(
        "--follow", action="store_true", help="Print its logs until it ends; exit 5 unless it completed."
    )
    p.add_argument("--interval", type=float, default=1.0, help="Seconds between polls (default 1).")
    p = _command(runs, "cancel", runs_cancel, "Cancel a run.")
    p.add_argument("run_id")
    p = _command(runs, "rerun", runs_rerun, "Run a finished run again (a new run).")
    p.add_argument("run_id")
    p.add_argument(
        "--failed-only", action="store_true", help="Only its failed tasks (and what follows them)."
    )
    p = _command(runs, "logs", runs_logs, "A run's task logs.")
    p.add_argument("run_id")
    p.add_argument(
        "--follow",
        action="store_true",
        help="Print new lines until the run ends; exit 5 unless it completed.",
    )
    p.add_argument("--interval", type=float, default=1.0, help="Seconds between polls (default 1).")
    definitions = _group(orch, "definitions", "Definitions as code.")
    p = _command(
        definitions,
        "diff",
        definitions_diff,
        "What `definitions sync DIR` would change (a dry run on the server).",
    )
    p.add_argument("dir", help="A folder of *.yaml definition files (or one file).")
    p.add_argument(
        "--prune", action="store_true", help="Also list what no file defines (deleted by a sync --prune)."
    )
    p.add_argument("--verbose", action="store_true", help="List unchanged definitions too.")
    p.add_argument("--exit-code", action="store_true", help="Exit 1 when there are changes.")


def _case_parser(services: Any) -> None:
    case = _group(services, "case", "The case service: cases and tasks.")
    cases = _group(case, "cases", "Cases.")
    p = _command(cases, "list", cases_list, "List cases, newest first.")
    p.add_argument("--status", help="Only cases in this status.")
    p.add_argument("--limit", type=int, default=25, help="At most this many (default 25, at most 100).")
    p = _command(cases, "show", cases_show, "One case.")
    p.add_argument("case_id")
    p = _command(cases, "create", cases_create, "Open a case of a case type.")
    p.add_argument("--type", required=True, help="The case type key (its latest version).")
    p.add_argument("--data", default="{}", help="The case data, a JSON object.")
    p.add_argument("--title", help="The case's display name.")
    tasks = _group(case, "tasks", "Human tasks.")
    p = _command(tasks, "inbox", tasks_inbox, "Tasks you may work on.")
    p.add_argument("--status", choices=["claimed", "unclaimed", "completed"], help="Default: open tasks.")
    p.add_argument("--limit", type=int, default=25, help="At most this many (default 25, at most 100).")
    for name, handler, text in (
        ("claim", tasks_claim, "Claim a task."),
        ("complete", tasks_complete, "Complete a task."),
    ):
        p = _command(tasks, name, handler, text)
        p.add_argument("case_id")
        p.add_argument("step_id")
    p.add_argument("--data", default="{}", help="The form data, a JSON object.")
    p.add_argument("--outcome", help="The outcome, when the task has outcomes.")


def parser() -> argparse.ArgumentParser:
    root = argparse.ArgumentParser(
        prog="caseflow", description=__doc__.split("\n\n")[0],
        epilog="Exit codes: 0 ok, 1 diff --exit-code found changes, 2 usage error, 3 API error, "
        "4 unreachable or unconfigured, 5 the run failed or was cancelled.",
    )  # fmt: skip
    root.add_argument(
        "--output", choices=["table", "json"], default="table", help="Output format (default table)."
    )
    root.add_argument(
        "--config", help="The config file (default $CASEFLOW_CONFIG or ~/.config/caseflow/config.toml)."
    )
    services = root.add_subparsers(dest="service", required=True, metavar="SERVICE")
    _orch_parser(services)
    _case_parser(services)
    return root


def main(argv: Sequence[str] | None = None, out: TextIO | None = None, err: TextIO | None = None) -> int:
    out, err = out or sys.stdout, err or sys.stderr
    args = parser().parse_args(argv)  # a usage error exits 2 here, with argparse's message
    args.out = out
    try:
        return int(args.handler(args))
    except Usage as exc:
        err.write(f"caseflow: {exc}\n")
        return USAGE
    except Unconfigured as exc:
        err.write(f"caseflow: {exc}\n")
        return UNREACHABLE
    except ApiError as exc:
        err.write(f"caseflow: {exc}\n")
        for problem in exc.errors[1:]:
            err.write(f"  {problem.get('field') or ''}: {problem.get('error')}\n")
        return UNREACHABLE if exc.code == "unreachable" else API_ERROR


if __name__ == "__main__":
    sys.exit(main())
