"""The guard between an agent and a command: `python -I -S guard.py WATCH_FD COMMAND...`.

It starts the command in its own process group (the guard is that group's leader) and waits. When
the command exits, the guard exits with the same status (a signal death included). When the agent
process that started it dies, even by SIGKILL, the pipe it holds open (WATCH_FD) reads end-of-file
and the guard kills the whole group: the command and the background children it left.

Why a pipe rather than the parent-death signal: PR_SET_PDEATHSIG fires when the *thread* that
started the child exits, and an agent starts commands from pool threads; an open file, instead,
closes only when the whole process dies. The command itself gets PR_SET_PDEATHSIG against the
guard (a single-threaded process), so it dies too should the guard itself be killed.

Runs without Django or site-packages (it starts once per task run, so it must start fast)."""

from __future__ import annotations

import ctypes
import os
import select
import signal
import subprocess
import sys

PR_SET_PDEATHSIG = 1


def _die_with_the_guard() -> None:
    try:
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    except (OSError, AttributeError):  # not Linux: the pipe still covers the agent's death
        pass


def _wait(child: subprocess.Popen, watch_fd: int) -> bool:
    """Waits for the command's exit (True) or the agent's death (False)."""
    try:
        child_fd = os.pidfd_open(child.pid)
    except (AttributeError, OSError):  # kernels before 5.3: look at the child every 0.2 s
        child_fd = None
    while True:
        fds = [watch_fd] if child_fd is None else [watch_fd, child_fd]
        ready, _, _ = select.select(fds, [], [], 0.2 if child_fd is None else None)
        if child.poll() is not None:
            return True
        if watch_fd in ready and not os.read(watch_fd, 1):  # the agent never writes: only EOF
            return False


def main(argv: list[str]) -> int:
    watch_fd, command = int(argv[1]), argv[2:]
    # A cancel's SIGTERM to the group is meant for the command; a handler (unlike SIG_IGN) is reset
    # to the default in the command when it starts.
    signal.signal(signal.SIGTERM, lambda signum, frame: None)
    child = subprocess.Popen(command, preexec_fn=_die_with_the_guard)
    # The output pipe must close when the command's side does, not stay open through the guard.
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os.dup2(devnull, 2)
    if not _wait(child, watch_fd):
        os.killpg(0, signal.SIGKILL)  # the agent is gone: the group (this guard included) goes too
    code = child.wait()
    if code < 0:  # die by the same signal, so the agent reports it as the command's own
        signal.signal(-code, signal.SIG_DFL)
        os.kill(os.getpid(), -code)
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv))
