from casemgmt.ops.backup import case_backup_profile
from shared.backup.commands import BackupCommand
from shared.backup.profile import ServiceProfile


class Command(BackupCommand):
    def profile(self) -> ServiceProfile:
        return case_backup_profile()
