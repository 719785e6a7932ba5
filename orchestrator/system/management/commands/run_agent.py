"""Starts an agent: a Celery worker consuming the named task queues (and the control queue), with a
heartbeat thread that upserts its row every AGENT_HEARTBEAT_SECONDS, and a recovery thread that
runs the sweeper when no other process did within SWEEP_INTERVAL_SECONDS (no beat process needed).

Agents ride out broker outages: the worker reconnects for as long as the broker stays away, running
commands go on meanwhile, and should the worker still stop on an error of its own (not on a shutdown
that was asked for), the agent starts itself again in the same process slot (shared.worker); the
new process is a new session, so attempts the failed worker still held are recovered by the sweeper
once that session goes silent.

The agent process puts together the agents' heartbeat, the schedules' loop and the recovery sweep,
so the command lives in the system app, above all three."""

import os
import socket
import uuid

from celery import current_app
from celery.signals import worker_shutdown
from django.conf import settings
from django.core.management.base import BaseCommand

from orchestrator.agents.heartbeat import Heartbeat, parse_tags
from orchestrator.schedules.loop import SchedulerLoop
from orchestrator.system.sweeper import Sweeper
from shared.worker import POOLS, beat_in_thread, broker_outage_options, run_supervised


class Command(BaseCommand):
    help = "Run an orchestrator agent (a Celery worker) on the given queues."

    def add_arguments(self, parser):
        parser.add_argument(
            "--queues", default=os.environ.get("ORCH_AGENT_QUEUES", settings.DEFAULT_TASK_QUEUE)
        )
        parser.add_argument(
            "--concurrency", type=int, default=int(os.environ.get("ORCH_AGENT_CONCURRENCY", "2"))
        )
        parser.add_argument(
            "--pool", choices=POOLS, default="prefork",
            help="prefork (default: a process per concurrency slot), or threads / solo in one process",
        )  # fmt: skip
        parser.add_argument("--name", default=os.environ.get("ORCH_AGENT_NAME", "agent"))
        parser.add_argument("--tags", default=os.environ.get("ORCH_AGENT_TAGS", ""))
        parser.add_argument("--no-control", action="store_true", help="do not consume the control queue")
        parser.add_argument(
            "--beat", action="store_true", help="also run the periodic scheduler (one per deployment)"
        )
        parser.add_argument(
            "--no-sweep", action="store_true", help="leave the recovery sweep to the other agents"
        )

    def handle(self, *args, **options):
        # The orchestrator's Celery app, made current when Django loaded `orchestrator.config` (the
        # apps sit below config, so they do not import it).
        app = current_app._get_current_object()
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
            "worker", "-Q", ",".join(consumed), "-c", str(options["concurrency"]), "-P", options["pool"],
            "-n", nodename,
            "-l", "INFO", "--without-gossip", "--without-mingle", "--without-heartbeat",
        ]  # fmt: skip
        app.conf.update(broker_outage_options(dict(app.conf.broker_transport_options or {})))
        if options["beat"]:  # a thread of this process, not a process of its own (shared.worker)
            settings.VAR_DIR.mkdir(parents=True, exist_ok=True)
            beat_in_thread(app, str(settings.VAR_DIR / "beat-schedule"))
        heartbeat = Heartbeat(
            agent_id=nodename, session_id=session_id, queues=queues, tags=parse_tags(options["tags"])
        )
        worker_shutdown.connect(heartbeat.shutdown, weak=False)
        heartbeat.start()
        # Every agent on the control queue also ticks the time schedules, so schedules fire for as
        # long as any such agent lives; concurrent ticks are made safe by the database.
        if not options["no_control"] and settings.SCHEDULER_IN_AGENTS:
            scheduler = SchedulerLoop(name=nodename)
            worker_shutdown.connect(scheduler.shutdown, weak=False)
            scheduler.start()
        if not options["no_sweep"]:
            sweeper = Sweeper(agent_id=nodename)
            worker_shutdown.connect(sweeper.shutdown, weak=False)
            sweeper.start()
        run_supervised(app, argv, label="agent", min_uptime_seconds=settings.AGENT_RESTART_MIN_UPTIME_SECONDS)
