"""`manage_case.py definitions sync --tenant T DIR [--dry-run] [--publish] [--source S] [--as EMAIL]`
and `definitions export --tenant T DIR`: a tenant's case types, workflows and prompt templates as
YAML files (docs/definitions-as-code.md)."""

from __future__ import annotations

from typing import Any

from django.core.management.base import CommandError, CommandParser

from casemgmt.ops.definitions import export_documents, sync_apply, sync_plan, tenant_find
from shared.definitions.command import DefinitionsCommand
from shared.definitions.files import Document


class Command(DefinitionsCommand):
    def add_sync_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--tenant", required=True, help="The tenant's name (or id).")
        parser.add_argument("--publish", action="store_true", help="Publish each changed workflow.")
        parser.add_argument(
            "--as", dest="as_email", help="The user the changes are made as (default: an admin)."
        )

    def add_export_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--tenant", required=True, help="The tenant's name (or id).")

    def sync(self, documents: list[Document], options: dict[str, Any]) -> dict[str, Any]:
        if options["prune"]:
            raise CommandError("--prune: the case service keeps every version; nothing is deleted by a sync.")
        plan = sync_plan(tenant_find(options["tenant"]), documents, publish=options["publish"])
        return sync_apply(
            plan, as_email=options["as_email"], source=options["source"], dry_run=options["dry_run"]
        )

    def export(self, options: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
        return {
            f"{kind}s": documents
            for kind, documents in export_documents(tenant_find(options["tenant"])).items()
        }
