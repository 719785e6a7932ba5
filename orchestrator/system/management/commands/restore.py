from orchestrator.system.backup import orchestrator_backup_profile
from shared.backup.commands import RestoreCommand
from shared.backup.profile import ServiceProfile


class Command(RestoreCommand):
    def profile(self) -> ServiceProfile:
        return orchestrator_backup_profile()
