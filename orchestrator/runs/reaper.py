"""The reaper between an agent process and its commands: `python -I -S reaper.py WATCH_FD`.

One reaper per agent process (started on its first command, in its own session so that a kill of
the agent's process group leaves it standing). Each command's shell registers its process group on
the pipe (`+PGID`) before the command itself runs, so no command runs unregistered; the agent
unregisters it once the group is gone (`-PGID`). The agent holds the pipe's write end; the kernel
closes it only when the whole agent process dies, whatever killed it. The reaper then reads
end-of-file and kills every group still registered: the commands and the background children they
left. Then it exits (also when the agent ends normally, with nothing registered).

One long-lived reaper rather than a guard process per command: starting a Python process costs
about 20 ms of CPU, more than everything else an agent does for a short task run.

Runs without Django or site-packages (standard library only)."""

from __future__ import annotations

import contextlib
import os
import signal
import sys


def apply(groups: set[int], line: bytes) -> None:
    """`+PGID` registers a group, `-PGID` forgets it; anything else is ignored."""
    try:
        pgid = int(line[1:])
    except ValueError:
        return
    if line[:1] == b"+":
        groups.add(pgid)
    elif line[:1] == b"-":
        groups.discard(pgid)


def main(argv: list[str]) -> int:
    watch_fd = int(argv[1])
    # A cancel or a supervisor's SIGTERM to a group is never meant for the reaper.
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    groups: set[int] = set()
    pending = b""
    while True:
        data = os.read(watch_fd, 65536)
        if not data:  # every holder of the write end is gone: the agent process died or ended
            break
        *lines, pending = (pending + data).split(b"\n")
        for line in lines:
            apply(groups, line)
    for pgid in groups:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pgid, signal.SIGKILL)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
