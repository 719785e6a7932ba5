"""Starts an agent: a Celery worker consuming the named task queues (and the control queue)."""

import os

from django.conf import settings
from django.core.management.base import BaseCommand

from orchestrator.config.celery import app


class Command(BaseCommand):
    help = "Run an orchestrator agent (a Celery worker) on the given queues."

    def add_arguments(self, parser):
        parser.add_argument("--queues", default=os.environ.get("ORCH_AGENT_QUEUES", settings.DEFAULT_TASK_QUEUE))
        parser.add_argument("--concurrency", type=int, default=int(os.environ.get("ORCH_AGENT_CONCURRENCY", "2")))
        parser.add_argument("--name", default=os.environ.get("ORCH_AGENT_NAME", "agent"))
        parser.add_argument("--beat", action="store_true", help="also run the periodic scheduler (one per deployment)")

    def handle(self, *args, **options):
        queues = [q.strip() for q in options["queues"].split(",") if q.strip()]
        argv = [
            "worker", "-Q", ",".join([settings.CELERY_DEFAULT_QUEUE, *queues]),
            "-c", str(options["concurrency"]), "-n", f"{options['name']}@%h", "-l", "INFO",
        ]  # fmt: skip
        if options["beat"]:
            argv += ["-B", "-s", str(settings.VAR_DIR / "beat-schedule")]
        app.worker_main(argv)
