"""The `backup` and `restore` management commands, shared by both services: each service's
command module subclasses these and names its profile.

`backup` has two forms in one command: `backup --output F [...]` takes a backup, and
`backup verify F` checks one (a positional action word; any other word is an error).
"""

from __future__ import annotations

from argparse import ArgumentParser
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from shared.backup.archive import COMPRESSIONS, read_metadata
from shared.backup.create import BackupRequest, backup_create
from shared.backup.errors import BackupError
from shared.backup.manifest import BLOB, Manifest
from shared.backup.metadata import key_report
from shared.backup.profile import ServiceProfile
from shared.backup.restore import restore_plan, restore_run
from shared.backup.verify import archive_verify


class ProfileCommand(BaseCommand):
    def profile(self) -> ServiceProfile:
        raise NotImplementedError

    def say(self, line: str) -> None:
        self.stdout.write(line)

    def execute(self, *args: Any, **options: Any) -> Any:
        """A failed backup, verification or restore is one clear line and a non-zero exit, never a
        traceback."""
        try:
            return super().execute(*args, **options)
        except BackupError as exc:
            raise CommandError(str(exc)) from None


class BackupCommand(ProfileCommand):
    help = "Back up the database (and stored files) to an archive, or `backup verify FILE` to check one."

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("action", nargs="?", metavar="verify", help="`verify` checks the archive FILE")
        parser.add_argument("file", nargs="?", metavar="FILE", help="the archive to verify")
        parser.add_argument("--output", help="archive to write (must not exist)")
        parser.add_argument("--compress", choices=sorted(COMPRESSIONS), default="gzip")
        parser.add_argument("--verify", action="store_true", help="verify the archive once written")
        parser.add_argument(
            "--incremental",
            action="store_true",
            help="hold only blobs added since the newest earlier backup in the output's folder",
        )
        parser.add_argument("--no-progress", action="store_true", help="never show progress bars")

    def handle(self, *args: Any, **options: Any) -> None:
        if options["action"] is None:
            self._backup(options)
        elif options["action"] == "verify":
            self._verify(options)
        else:
            raise CommandError(
                f"unknown action {options['action']!r}: use `backup --output FILE` or `backup verify FILE`"
            )

    def _backup(self, options: dict[str, Any]) -> None:
        if not options["output"]:
            raise CommandError("--output is required (or `backup verify FILE` to check an archive)")
        request = BackupRequest(
            output=Path(options["output"]),
            compression=options["compress"],
            incremental=options["incremental"],
            show_progress=not options["no_progress"],
        )
        manifest = backup_create(profile=self.profile(), request=request, say=self.say)
        self.say(f"Backup {manifest.backup_id} written to {request.output}: {summary(manifest)}")
        if options["verify"]:
            archive_verify(request.output, show_progress=request.show_progress)
            self.say("Verified: every member matches the manifest and the dump reads through")

    def _verify(self, options: dict[str, Any]) -> None:
        if not options["file"]:
            raise CommandError("`backup verify` needs the archive: backup verify FILE")
        if options["output"] or options["incremental"] or options["verify"]:
            raise CommandError("`backup verify FILE` takes no --output, --incremental or --verify")
        path = Path(options["file"])
        manifest = archive_verify(path, show_progress=not options["no_progress"])
        self.say(f"OK: backup {manifest.backup_id} of {manifest.service} ({summary(manifest)})")
        if manifest.service == self.profile().service:
            report = key_report(profile=self.profile(), metadata=read_metadata(path))
            if report:
                self.say(report)


class RestoreCommand(ProfileCommand):
    help = "Restore an archive into an empty folder, and optionally load it into an empty database."

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument(
            "--input", required=True, help="the archive (its parents are looked up beside it)"
        )
        parser.add_argument(
            "--target", required=True, help="empty (or absent) folder to restore the files into"
        )
        parser.add_argument("--verify", action="store_true", help="verify every archive before restoring")
        parser.add_argument("--dry-run", action="store_true", help="say what would be done; change nothing")
        parser.add_argument(
            "--database-url",
            default="",
            help="also load the dump into this empty database (default: the RESTORE_DATABASE_URL setting)",
        )
        parser.add_argument("--no-progress", action="store_true", help="never show progress bars")

    def handle(self, *args: Any, **options: Any) -> None:
        plan = restore_plan(
            profile=self.profile(),
            source=Path(options["input"]),
            target=Path(options["target"]),
            database_url=options["database_url"] or settings.RESTORE_DATABASE_URL,
        )
        if options["dry_run"]:
            if options["verify"]:  # reading only: a dry run still says whether the archives are sound
                for path, _ in plan.chain:
                    archive_verify(path, show_progress=not options["no_progress"])
                    self.say(f"Verified {path.name}")
            for line in ["Dry run: nothing is written.", *plan.describe()]:
                self.say(line)
            return
        restore_run(
            plan=plan, verify=options["verify"], show_progress=not options["no_progress"], say=self.say
        )


def summary(manifest: Manifest) -> str:
    blobs = sum(1 for member in manifest.members if member.kind == BLOB)
    kind = f"incremental on {manifest.parent['id']}" if manifest.parent else "full"
    return f"{kind}, {manifest.database_vendor} dump, {blobs} of {len(manifest.blobs)} blob(s) held, {manifest.compression}"
