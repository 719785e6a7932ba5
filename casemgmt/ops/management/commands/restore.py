from casemgmt.ops.backup import case_backup_profile
from shared.backup.commands import RestoreCommand
from shared.backup.profile import ServiceProfile


class Command(RestoreCommand):
    def profile(self) -> ServiceProfile:
        return case_backup_profile()
