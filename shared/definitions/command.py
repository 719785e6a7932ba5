"""The `definitions` management command both services have: `sync DIR` and `export DIR`. Each
service's command subclasses `DefinitionsCommand` with its own plan / apply / export functions;
this part reads the folder, prints the plan and writes the export files."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from shared.api.errors import ApplicationError
from shared.definitions.files import dump_documents, read_documents
from shared.definitions.plan import render


def error_text(exc: ApplicationError) -> str:
    """Every problem on its own line, file and field first."""
    lines = [f"{exc.code}: {exc.message}"]
    if len(exc.errors) > 1:
        lines += [f"  {e.get('field') or ''}: {e['error']}" for e in exc.errors]
    return "\n".join(lines)


class DefinitionsCommand(BaseCommand):
    help = "Sync a folder of YAML definitions into this service, or export them into one."

    def add_arguments(self, parser: CommandParser) -> None:
        actions = parser.add_subparsers(dest="action", required=True)
        sync = actions.add_parser("sync", help="Apply a folder of definitions (one transaction).")
        sync.add_argument("dir", help="A folder of *.yaml files (or one file).")
        sync.add_argument("--dry-run", action="store_true", help="Print the plan; change nothing.")
        sync.add_argument("--prune", action="store_true", help="Delete what no file defines.")
        sync.add_argument(
            "--source", default="", help="Where the files come from (e.g. a git commit), audited."
        )
        sync.add_argument("--json", action="store_true", help="Print the plan as JSON.")
        sync.add_argument("--verbose", action="store_true", help="List unchanged definitions too.")
        self.add_sync_arguments(sync)
        export = actions.add_parser("export", help="Write the current definitions as files.")
        export.add_argument("dir", help="The folder to write (created if missing).")
        self.add_export_arguments(export)

    def add_sync_arguments(self, parser: CommandParser) -> None:
        pass

    def add_export_arguments(self, parser: CommandParser) -> None:
        pass

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            if options["action"] == "sync":
                documents = read_documents(Path(options["dir"]))
                body = self.sync(documents, options)
                self.stdout.write(
                    json.dumps(body, indent=2)
                    if options["json"]
                    else render(body, verbose=options["verbose"])
                )
            else:
                self._export(Path(options["dir"]), options)
        except ApplicationError as exc:
            raise CommandError(error_text(exc), returncode=3 if exc.status_code == 409 else 1) from None

    def _export(self, folder: Path, options: dict[str, Any]) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        for name, documents in self.export(options).items():
            path = folder / f"{name}.yaml"
            if documents:
                path.write_text(dump_documents(documents), encoding="utf-8")
                self.stdout.write(f"wrote {path} ({len(documents)})")

    def sync(self, documents: list[Any], options: dict[str, Any]) -> dict[str, Any]:
        raise NotImplementedError

    def export(self, options: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
        """{file name without .yaml: documents}"""
        raise NotImplementedError
