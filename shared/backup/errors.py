class BackupError(Exception):
    """A backup, verification or restore that cannot go on. The message is for the operator: the
    command line prints it and exits non-zero, with no traceback."""


class BlobVanished(BackupError):
    """A file the dumped database refers to was removed from storage before it was copied (its
    document was deleted during the backup). The backup is taken again from a newer snapshot."""


class Damaged(BackupError):
    """What is wrong with an archive's bytes, in one line without the file's name (the reader
    that knows the file adds it)."""
