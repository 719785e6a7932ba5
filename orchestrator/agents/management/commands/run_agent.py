"""Starts an agent: a Celery worker consuming the named task queues (and the control queue), with a
heartbeat thread that upserts its row every AGENT_HEARTBEAT_SECONDS.

Agents ride out broker outages: the worker reconnects for as long as the broker stays away, running
commands go on meanwhile, and should the worker still stop on an error of its own (not on a shutdown
that was asked for), the agent starts itself again in the same process slot."""

import logging
import os
import socket
import sys
import time
import uuid

from celery.signals import worker_shutdown, worker_shutting_down
from django.conf import settings
from django.core.management.base import BaseCommand

from orchestrator.agents.heartbeat import Heartbeat, parse_tags
from orchestrator.config.celery import app
from orchestrator.schedules.loop import SchedulerLoop

logger = logging.getLogger(__name__)


def agent_celery_options(transport_options: dict) -> dict:
    """Celery settings of the agent's worker, for broker outages.

    - Reconnect forever (Celery gives up, and the worker exits, after 100 tries by default).
    - Commands already running keep running when the connection drops; their results go to the
      database, and a message Redis delivers again is dropped by the conditional claim.
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


class Command(BaseCommand):
    help = "Run an orchestrator agent (a Celery worker) on the given queues."

    def add_arguments(self, parser):
        parser.add_argument(
            "--queues", default=os.environ.get("ORCH_AGENT_QUEUES", settings.DEFAULT_TASK_QUEUE)
        )
        parser.add_argument(
            "--concurrency", type=int, default=int(os.environ.get("ORCH_AGENT_CONCURRENCY", "2"))
        )
        parser.add_argument("--name", default=os.environ.get("ORCH_AGENT_NAME", "agent"))
        parser.add_argument("--tags", default=os.environ.get("ORCH_AGENT_TAGS", ""))
        parser.add_argument("--no-control", action="store_true", help="do not consume the control queue")
        parser.add_argument(
            "--beat", action="store_true", help="also run the periodic scheduler (one per deployment)"
        )

    def handle(self, *args, **options):
        queues = [q.strip() for q in options["queues"].split(",") if q.strip()]
        nodename = f"{options['name']}@{socket.gethostname()}"
        # Pool children inherit it: task runs are attributed to the agent that heartbeats for them.
        os.environ["ORCH_AGENT_ID"] = nodename
        # This process's own identity: a restart under the same name is a new session, so the
        # sweeper can tell the work of a killed predecessor from this process's own.
        session_id = uuid.uuid4().hex
        os.environ["ORCH_AGENT_SESSION"] = session_id
        consumed = queues if options["no_control"] else [settings.CELERY_DEFAULT_QUEUE, *queues]
        argv = [
            "worker", "-Q", ",".join(consumed), "-c", str(options["concurrency"]), "-n", nodename,
            "-l", "INFO", "--without-gossip", "--without-mingle", "--without-heartbeat",
        ]  # fmt: skip
        if options["beat"]:
            settings.VAR_DIR.mkdir(parents=True, exist_ok=True)
            argv += ["-B", "-s", str(settings.VAR_DIR / "beat-schedule")]
        app.conf.update(agent_celery_options(dict(app.conf.broker_transport_options or {})))
        heartbeat = Heartbeat(
            agent_id=nodename, session_id=session_id, queues=queues, tags=parse_tags(options["tags"])
        )
        asked, exit_codes = [], []
        worker_shutting_down.connect(lambda **kwargs: asked.append(kwargs.get("sig")), weak=False)
        worker_shutdown.connect(lambda sender=None, **kw: exit_codes.append(sender.exitcode), weak=False)
        worker_shutdown.connect(heartbeat.shutdown, weak=False)
        heartbeat.start()
        # Every agent on the control queue also ticks the time schedules, so schedules fire for as
        # long as any such agent lives; concurrent ticks are made safe by the database.
        if not options["no_control"] and settings.SCHEDULER_IN_AGENTS:
            scheduler = SchedulerLoop(name=nodename)
            worker_shutdown.connect(scheduler.shutdown, weak=False)
            scheduler.start()
        started = time.monotonic()
        app.worker_main(argv)
        code = exit_codes[-1] if exit_codes else None
        # A worker that failed soon after starting is failing to start (bad settings): it exits
        # rather than restarting in a loop.
        ran_long_enough = time.monotonic() - started >= settings.AGENT_RESTART_MIN_UPTIME_SECONDS
        if code and not asked and ran_long_enough:
            restart_agent(code)
        if code:
            raise SystemExit(code)


def restart_agent(code) -> None:
    """Replaces this process with a fresh agent (a new session: attempts the failed worker still
    held are recovered by the sweeper once its session goes silent)."""
    logger.error("Agent worker stopped on its own (exit code %s); starting the agent again", code)
    sys.stdout.flush()
    sys.stderr.flush()
    time.sleep(1)  # no tight loop should the new start fail at once the same way
    os.execv(sys.executable, [sys.executable, *sys.argv])
