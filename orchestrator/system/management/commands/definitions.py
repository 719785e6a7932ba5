"""`manage_orch.py definitions sync DIR [--dry-run] [--prune] [--source S]` and
`definitions export DIR`: tasks, DAGs, schedules, pools and contexts as YAML files
(docs/definitions-as-code.md)."""

from __future__ import annotations

from typing import Any

from django.core.management.base import CommandParser

from orchestrator.audit.services import SYSTEM_ACTOR
from orchestrator.system.definitions import export_documents, sync_apply, sync_plan
from shared.definitions.command import DefinitionsCommand
from shared.definitions.files import Document


class Command(DefinitionsCommand):
    def add_sync_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--actor", default=SYSTEM_ACTOR, help="Who the audit trail names.")

    def sync(self, documents: list[Document], options: dict[str, Any]) -> dict[str, Any]:
        plan = sync_plan(documents, prune=options["prune"])
        return sync_apply(plan, actor=options["actor"], source=options["source"], dry_run=options["dry_run"])

    def export(self, options: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
        return {f"{kind}s": documents for kind, documents in export_documents().items()}
