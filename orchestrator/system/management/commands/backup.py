from orchestrator.system.backup import orchestrator_backup_profile
from shared.backup.commands import BackupCommand
from shared.backup.profile import ServiceProfile


class Command(BackupCommand):
    def profile(self) -> ServiceProfile:
        return orchestrator_backup_profile()
