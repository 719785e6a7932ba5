"""Celery workers that outlive broker (Redis) outages, for both services' worker commands.

Two layers. `broker_outage_options` keeps the worker connected through an outage: it reconnects
for as long as the broker stays away and running tasks carry on. `run_supervised` covers the rest:
should the worker still stop on an error of its own (Celery's "Unrecoverable error"; not a shutdown
that was asked for), the process replaces itself with a fresh worker after a pause that doubles with
each restart in a row, so its supervisor (Procfile, Kubernetes) never sees it go. A worker that fails
soon after starting is failing to start (bad settings): it exits instead, so nothing loops.

`run_supervised` also sweeps the prefork pool's cancelled time-limit timers (`drop_cancelled_timers`).
"""

from __future__ import annotations

import logging
import os
import sys
import time
from typing import Any

from celery import Celery
from celery.signals import worker_ready, worker_shutdown, worker_shutting_down
from kombu.asynchronous import get_event_loop
from kombu.asynchronous.timer import Timer

from shared import backoff

logger = logging.getLogger(__name__)
RESTARTS_ENV = "CELERY_WORKER_RESTARTS"  # restarts in a row, carried across os.execv
RESTART_DELAY_CAP_SECONDS = 30.0
STEADY_SECONDS = 300.0  # a worker that ran this long before failing starts the count again
TIMER_SWEEP_SECONDS = 60.0
_swept_hubs: set[int] = set()


def broker_outage_options(transport_options: dict[str, Any]) -> dict[str, Any]:
    """Celery settings of a worker, for broker outages.

    - Reconnect forever (Celery gives up, and the worker exits, after 100 tries by default).
    - Tasks already running keep running when the connection drops; what they write goes to the
      database, and a message Redis delivers again finds nothing left to claim.
    - Socket timeouts and health checks, so a broker that stops answering (rather than refusing
      connections) is noticed instead of blocking the worker for good.
    """
    return {
        "broker_connection_retry": True,
        "broker_connection_max_retries": None,
        "worker_cancel_long_running_tasks_on_connection_loss": False,
        "broker_transport_options": {
            "socket_timeout": 15,
            "socket_connect_timeout": 5,
            "socket_keepalive": True,
            "health_check_interval": 10,
            **transport_options,
        },
    }


POOLS = ("prefork", "threads", "solo")


def beat_in_thread(app: Celery, schedule_file: str) -> Any:
    """Celery beat in a thread of this worker process. `celery worker -B` forks a process of its
    own for it (~100 MB of RSS for a scheduler that sends a message every few seconds): the
    embedded default (`make run`) runs it here instead. Stopped (its schedule file saved) when the
    worker shuts down."""
    from celery.beat import EmbeddedService

    service = EmbeddedService(app, schedule_filename=schedule_file, thread=True)
    worker_shutdown.connect(lambda **_: service.stop(), weak=False)
    service.start()
    return service


def drop_cancelled_timers(timer: Timer) -> int:
    """Removes the cancelled entries from the event loop's timer; returns how many.

    With the prefork pool, the worker's main process arms a time-limit timer (the soft limit's) for
    every task it hands to a child, and cancels it when the task ends; but a cancelled entry stays
    in the timer's heap until it would have fired. The orchestrator's task runs have a day's limit
    (runs.wakeups: their own timeout governs), so each left about 600 bytes in the agent for a day:
    at 5 task runs/s, 250 MB per agent before the first ones went (bench/procfile_memory.py found it
    as steady growth of the agent's main process). Swept every minute, only live timers remain."""
    entries = timer.queue  # a sorted copy; `clear` empties the heap in place, as the loop holds it
    live = [item for item in entries if not item.entry.canceled]
    if len(live) < len(entries):
        timer.clear()
        for eta, priority, entry in live:
            timer.enter_at(entry, eta, priority)
    return len(entries) - len(live)


def sweep_timers_when_ready(**_: Any) -> None:
    """Runs on `worker_ready`, in the thread of the worker's event loop (none with the threads or
    solo pool, which arm no timers per task); once per loop, should the consumer start again."""
    hub = get_event_loop()
    if hub is not None and id(hub) not in _swept_hubs:
        _swept_hubs.add(id(hub))
        hub.call_repeatedly(TIMER_SWEEP_SECONDS, drop_cancelled_timers, hub.timer)


def restart_delay(restarts: int) -> float:
    """1, 2, 4, 8 ... seconds before the n-th restart in a row, capped."""
    return backoff.exponential(restarts + 1, base=1.0, cap=RESTART_DELAY_CAP_SECONDS)


def run_supervised(app: Celery, argv: list[str], *, label: str, min_uptime_seconds: float) -> None:
    """Runs `celery worker` with `argv` in this process; on a failure of its own after at least
    `min_uptime_seconds`, starts this command again (same pid). Exits with the worker's code
    otherwise."""
    asked: list[object] = []
    exit_codes: list[int | None] = []
    worker_shutting_down.connect(lambda **kwargs: asked.append(kwargs.get("sig")), weak=False)
    worker_shutdown.connect(lambda sender=None, **kw: exit_codes.append(sender.exitcode), weak=False)
    worker_ready.connect(sweep_timers_when_ready, weak=False)
    started = time.monotonic()
    app.worker_main(argv)
    code = exit_codes[-1] if exit_codes else None
    uptime = time.monotonic() - started
    if code and not asked and uptime >= min_uptime_seconds:
        restart(code, label=label, uptime=uptime)
    if code:
        raise SystemExit(code)


def restart(code: int, *, label: str, uptime: float) -> None:
    """Replaces this process with a fresh one running the same command line."""
    restarts = 0 if uptime >= STEADY_SECONDS else int(os.environ.get(RESTARTS_ENV, "0"))
    delay = restart_delay(restarts)
    logger.error(
        "%s stopped on its own (exit code %s); starting the %s again in %g s",
        label.capitalize(), code, label, delay,
    )  # fmt: skip
    sys.stdout.flush()
    sys.stderr.flush()
    time.sleep(delay)  # no tight loop should the new start fail the same way at once
    os.environ[RESTARTS_ENV] = str(restarts + 1)
    os.execv(sys.executable, [sys.executable, *sys.argv])  # noqa: S606 - re-executes this interpreter with its own arguments
