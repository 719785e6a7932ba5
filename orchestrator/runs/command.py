"""The subprocess side of an attempt: the command in its own process group, registered with the agent
process's reaper that kills the group should the agent die, output captured line by line into the
database in batches, a timeout that kills the group, and a poll of the task run's status so that a
cancel stops the command (SIGTERM, SIGKILL after a grace period)."""

from __future__ import annotations

import logging
import os
import re
import select
import selectors
import shlex
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from django.conf import settings
from django.db import transaction
from django.db.models import F

from orchestrator.definitions import environment
from orchestrator.runs.claim import Execution, task_run_still_mine
from orchestrator.runs.models import TaskLogLine, TaskRun
from orchestrator.runs.transient import TRANSIENT, retry_transient, tolerate
from shared.api.time import now_ms

logger = logging.getLogger(__name__)

REFERENCE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
BASE_ENV = ("PATH", "HOME", "LANG", "LC_ALL", "TMPDIR", "TZ")
MAX_LINE_BYTES = 64 * 1024
REAPER = str(Path(__file__).with_name("reaper.py"))


@dataclass
class Outcome:
    ok: bool
    exit_code: int | None = None
    retryable: bool = True
    cancelled: bool = False
    note: str = ""


def substitute(command: str, values: dict[str, str]) -> tuple[str, list[str]]:
    """`${NAME}` -> the shell-quoted value; returns the command and the unknown names."""
    unknown: list[str] = []

    def replace(match: re.Match) -> str:
        name = match.group(1)
        if name not in values:
            unknown.append(name)
            return match.group(0)
        return shlex.quote(values[name])

    return REFERENCE.sub(replace, command), unknown


def command_env(execution: Execution, values: dict[str, str]) -> dict[str, str]:
    """A small base environment (never the agent's own secrets), then the resolved parameters
    (`values`: the task run's, less those `environment.split_refused` leaves out)."""
    env = {k: os.environ[k] for k in BASE_ENV if k in os.environ}
    env.setdefault("PATH", "/usr/local/bin:/usr/bin:/bin")
    env.update(values)
    env.update(
        ORCH_RUN_ID=execution.run_id,
        ORCH_TASK_RUN_ID=execution.task_run_id,
        ORCH_ATTEMPT=str(execution.attempt),
    )
    return env


@dataclass
class LogSink:
    """Buffers output and writes it in batches, honouring TASK_LOG_MAX_BYTES per task run."""

    task_run_id: str
    stored: int
    truncated: bool
    buffer: list[TaskLogLine] = field(default_factory=list)
    pending_bytes: int = 0
    last_flush: float = field(default_factory=time.monotonic)

    def add(self, line: str) -> None:
        if self.truncated:
            return
        size = len(line.encode()) + 1
        if self.stored + self.pending_bytes + size > settings.TASK_LOG_MAX_BYTES:
            self.truncated = True
            limit = settings.TASK_LOG_MAX_BYTES
            line = f"[orchestrator] log truncated: TASK_LOG_MAX_BYTES ({limit}) reached; further output discarded"
            size = len(line) + 1
        self.buffer.append(TaskLogLine(task_run_id=self.task_run_id, at=now_ms(), line=line))
        self.pending_bytes += size

    def due(self) -> bool:
        return bool(self.buffer) and (
            len(self.buffer) >= 200 or time.monotonic() - self.last_flush >= settings.TASK_LOG_FLUSH_SECONDS
        )

    def flush(self) -> None:
        """All or nothing, so that a failed flush can simply be tried again with the same lines."""
        self.last_flush = time.monotonic()
        if not self.buffer:
            return
        try:
            with transaction.atomic():
                TaskLogLine.objects.bulk_create(self.buffer)
                TaskRun.objects.filter(pk=self.task_run_id).update(
                    log_bytes=F("log_bytes") + self.pending_bytes, log_truncated=self.truncated
                )
        except TRANSIENT:
            for line in self.buffer:
                line.pk = None
            raise
        self.stored += self.pending_bytes
        self.buffer, self.pending_bytes = [], 0


class LineReader:
    """Non-blocking line splitter over the command's output pipe (no thread per task run)."""

    def __init__(self, stream) -> None:
        self.fd = stream.fileno()
        os.set_blocking(self.fd, False)
        self.selector = selectors.DefaultSelector()
        self.selector.register(self.fd, selectors.EVENT_READ)
        self.partial = b""
        self.eof = False

    def read(self, timeout: float) -> list[str]:
        """Complete lines available within `timeout` (the rest of the output at EOF)."""
        if self.eof or not self.selector.select(timeout):
            return []
        chunks = []
        while True:
            try:
                chunk = os.read(self.fd, 65536)
            except BlockingIOError:
                break
            if not chunk:
                self.eof = True
                self.selector.close()
                break
            chunks.append(chunk)
        data = self.partial + b"".join(chunks)
        parts = data.split(b"\n")
        self.partial = b"" if self.eof else parts.pop()
        if self.eof and parts and parts[-1] == b"":
            parts.pop()
        while len(self.partial) > MAX_LINE_BYTES:  # an endless line is stored in pieces
            parts.append(self.partial[:MAX_LINE_BYTES])
            self.partial = self.partial[MAX_LINE_BYTES:]
        return [p.rstrip(b"\r").decode("utf-8", errors="replace") for p in parts]


def _killpg(proc: subprocess.Popen, sig: int) -> None:
    try:
        os.killpg(proc.pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


class Reaper:
    """This process's reaper (runs/reaper.py), started on first use, and again in a forked child
    (a Celery pool process) or should it have died. It keeps the groups it was told of, so that a
    replacement reaper learns the ones still running."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.owner: int | None = None  # the process that started the reaper
        self.proc: subprocess.Popen | None = None
        self.fd: int | None = None  # the pipe's write end
        self.groups: set[int] = set()

    def write_fd(self) -> int:
        with self.lock:
            alive = self.owner == os.getpid() and self.proc is not None and self.proc.poll() is None
            if not alive or self.fd is None:
                self._start()
            assert self.fd is not None
            return self.fd

    def _start(self) -> None:
        if self.owner != os.getpid():
            # a fork's copy of the parent's pipe would keep the parent's reaper from seeing it die
            if self.fd is not None:
                os.close(self.fd)
            self.fd, self.groups = None, set()
        elif self.fd is not None:
            os.close(self.fd)  # the pipe of a reaper that died
        read_end, write_end = os.pipe()
        try:
            self.proc = subprocess.Popen(
                [sys.executable, "-I", "-S", REAPER, str(read_end)],
                stdin=subprocess.DEVNULL, pass_fds=(read_end,), start_new_session=True,
            )  # fmt: skip
        except OSError:
            os.close(write_end)
            raise
        finally:
            os.close(read_end)
        self.owner, self.fd = os.getpid(), write_end
        for pgid in self.groups:
            os.write(write_end, b"+%d\n" % pgid)

    def alive(self) -> bool:
        with self.lock:
            return self.owner == os.getpid() and self.proc is not None and self.proc.poll() is None

    def started(self, pgid: int) -> None:
        with self.lock:
            self.groups.add(pgid)

    def forget(self, pgid: int) -> None:
        with self.lock:
            self.groups.discard(pgid)
            if self.owner == os.getpid() and self.fd is not None:
                try:
                    os.write(self.fd, b"-%d\n" % pgid)
                except OSError:  # the reaper died: its replacement will not learn this group
                    pass


reaper = Reaper()


# The command's shell first registers its own process group on the reaper's pipe (given to it as
# standard input) and lets the pipe go, then runs the command: no command ever runs unregistered.
# Should the reaper be gone, the write kills the shell (SIGPIPE) before the command runs (any other
# failed write ends it with 125, never running the command unregistered). The
# preamble shares the command's first line, so line numbers and messages stay those of
# `sh -c COMMAND` (a syntax error on that line stops the shell before anything ran, as it would).
# A shell does this, not a Python `preexec_fn`: with one, Python must copy the whole agent process
# (fork) to run it, where without it the child shares the agent's memory until it execs (vfork),
# as a plain subprocess does; the copy cost more CPU than the command itself.
REGISTER = 'printf "+%d\\n" "$$" >&0 || exit 125; exec 0</dev/null; '


def _start_command(command: str, env: dict[str, str]) -> subprocess.Popen:
    """`/bin/sh -c COMMAND` in a new session (its own process group), registered with the reaper by
    its own shell before the command runs (REGISTER)."""
    proc = subprocess.Popen(
        ["/bin/sh", "-c", REGISTER + command], stdin=reaper.write_fd(), stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT, env=env, start_new_session=True,
    )  # fmt: skip
    reaper.started(proc.pid)
    return proc


def _not_registered(proc: subprocess.Popen, output_seen: bool) -> bool:
    """The command's first process was killed by the write to a reaper that had died meanwhile: the
    command never ran (a command killed by SIGPIPE with no output while its reaper died is not
    told apart; it is reported as not started either way)."""
    return proc.returncode == -signal.SIGPIPE and not output_seen and not reaper.alive()


def _wait_exit(proc: subprocess.Popen, timeout: float) -> bool:
    """Waits up to `timeout` for the process to exit, woken by the exit itself (a pidfd) rather
    than by polling; True once it exited."""
    if proc.poll() is not None:
        return True
    try:
        pidfd = os.pidfd_open(proc.pid)
    except (AttributeError, OSError):  # kernels before 5.3
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            return False
        return True
    try:
        select.select([pidfd], [], [], timeout)
    finally:
        os.close(pidfd)
    return proc.poll() is not None


class CommandRunner:
    def __init__(self, execution: Execution) -> None:
        self.execution = execution
        self.sink = LogSink(execution.task_run_id, execution.log_bytes, execution.log_truncated)

    def run(self) -> Outcome:
        ex = self.execution
        if ex.attempt > 1:
            self.sink.add(f"[orchestrator] attempt {ex.attempt} of {ex.max_attempts}")
        values = self._allowed_values()
        env = command_env(ex, values)
        # Only parameters and env_vars resolve ${NAME}; the agent's own PATH/HOME never do.
        command, unknown = substitute(ex.command, values)
        if unknown:
            # an unknown ${NAME} fails the task run with a clear log line
            names = ", ".join(f"${{{n}}}" for n in dict.fromkeys(unknown))
            self.sink.add(f"[orchestrator] unknown parameter(s) {names} in command; task run failed")
            self.sink.flush()
            return Outcome(ok=False, retryable=False)
        try:
            proc = _start_command(command, env)
        except (OSError, subprocess.SubprocessError) as exc:
            self.sink.add(f"[orchestrator] could not start the command: {exc}")
            self.sink.flush()
            return Outcome(ok=False)
        try:
            outcome = self._supervise(proc)
        finally:
            _killpg(proc, signal.SIGKILL)  # leftovers of the group (background children)
            reaper.forget(proc.pid)
            if proc.stdout is not None:  # always, as it is started with stdout=PIPE
                proc.stdout.close()
            retry_transient(self.sink.flush, what="Final log flush")
        return outcome

    def _allowed_values(self) -> dict[str, str]:
        """The task run's variables less those no orchestrator data may set (a row written before
        that rule existed): left out, named (never their values) in the log and the task's log."""
        values, refused = environment.split_refused(self.execution.env)
        if refused:
            names = ", ".join(refused)
            logger.warning("Task run %s: refused environment variable(s) %s left out",
                           self.execution.task_run_id, names)  # fmt: skip
            self.sink.add(f"[orchestrator] environment variable(s) {names} may not be set by a run; left out")
        return values

    def _supervise(self, proc: subprocess.Popen) -> Outcome:
        ex = self.execution
        reader = LineReader(proc.stdout)
        started = time.monotonic()
        deadline = started + ex.timeout_seconds if ex.timeout_seconds else None
        next_check = started + settings.TASK_CANCEL_POLL_SECONDS
        kill_at: float | None = None
        exited_at: float | None = None
        cancelled = timed_out = output_seen = False
        while True:
            if reader.eof:  # output closed: wait for the exit itself (returns at once once it happened)
                if _wait_exit(proc, timeout=0.05):
                    break
            else:
                for line in reader.read(timeout=0.05):
                    self.sink.add(line)
                    output_seen = True
                if reader.eof:
                    continue
            now = time.monotonic()
            if self.sink.due():
                tolerate(self.sink.flush, "Log flush")
            if proc.poll() is not None and not reader.eof:
                exited_at = exited_at or now
                if now - exited_at > 1.0:  # background children still hold the pipe
                    _killpg(proc, signal.SIGKILL)
            if deadline and now >= deadline and not timed_out and not cancelled:
                timed_out = True
                self.sink.add(f"[orchestrator] timed out after {ex.timeout_seconds} s; process group killed")
                _killpg(proc, signal.SIGKILL)
            if now >= next_check and not cancelled:
                next_check = now + settings.TASK_CANCEL_POLL_SECONDS
                status = tolerate(lambda: task_run_still_mine(task_run_id=ex.task_run_id, attempt=ex.attempt),
                                   "Cancel check")  # fmt: skip
                mine, force = status or (True, False)
                if not mine:
                    cancelled = True
                    kill_at = now if force else now + settings.TASK_CANCEL_GRACE_SECONDS
                    how = "SIGKILL" if force else "SIGTERM"
                    self.sink.add(f"[orchestrator] task run cancelled; sending {how} to the process group")
                    _killpg(proc, signal.SIGKILL if force else signal.SIGTERM)
            if kill_at is not None and now >= kill_at:
                kill_at = None
                _killpg(proc, signal.SIGKILL)
        code = proc.returncode
        if _not_registered(proc, output_seen):
            self.sink.add("[orchestrator] could not start the command: the agent process's reaper was gone")
            return Outcome(ok=False)
        if cancelled:
            return Outcome(ok=False, exit_code=code, cancelled=True)
        if timed_out:
            return Outcome(ok=False, exit_code=code)
        if code == 0:
            return Outcome(ok=True, exit_code=0)
        reason = f"killed by signal {-code}" if code < 0 else f"exited with code {code}"
        return Outcome(ok=False, exit_code=code, note=f"[orchestrator] command {reason}")
