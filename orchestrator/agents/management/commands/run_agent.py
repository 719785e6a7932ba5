"""Starts an agent: a Celery worker consuming the named task queues (and the control queue), with a
heartbeat thread that upserts its row every AGENT_HEARTBEAT_SECONDS."""

import os
import socket
import uuid

from celery.signals import worker_shutdown
from django.conf import settings
from django.core.management.base import BaseCommand

from orchestrator.agents.heartbeat import Heartbeat, parse_tags
from orchestrator.config.celery import app


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
            argv += ["-B", "-s", str(settings.VAR_DIR / "beat-schedule")]
        heartbeat = Heartbeat(
            agent_id=nodename, session_id=session_id, queues=queues, tags=parse_tags(options["tags"])
        )
        heartbeat.start()
        worker_shutdown.connect(heartbeat.shutdown, weak=False)
        app.worker_main(argv)
