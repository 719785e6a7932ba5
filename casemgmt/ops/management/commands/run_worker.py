"""Starts the case service's Celery worker, made to outlive broker (Redis) outages.

Plain `celery worker` gives up reconnecting after 100 tries, and kombu can still stop it with an
"Unrecoverable error" when Redis dies under it; either way deliveries, notifications, erasures and
agent steps stop until someone restarts it. This command reconnects for as long as Redis stays
away and, should the worker stop on an error of its own anyway, starts it again in the same
process after a growing pause (shared.worker). Gossip, mingle and Celery's worker heartbeats are
off: nothing in the case service uses them, and they only add broker traffic and reconnect work.
"""

import os
import socket

from celery import current_app
from django.conf import settings
from django.core.management.base import BaseCommand

from shared.worker import POOLS, beat_in_thread, broker_outage_options, run_supervised


class Command(BaseCommand):
    help = "Run the case service's Celery worker, restarting it after an unrecoverable error."

    def add_arguments(self, parser):
        parser.add_argument(
            "--queues", default=os.environ.get("CASE_WORKER_QUEUES", settings.CELERY_DEFAULT_QUEUE)
        )
        parser.add_argument(
            "--concurrency", type=int, default=int(os.environ.get("CASE_WORKER_CONCURRENCY", "2"))
        )
        parser.add_argument(
            "--pool", choices=POOLS, default="prefork",
            help="prefork (default: a process per concurrency slot), or threads / solo in one process",
        )  # fmt: skip
        parser.add_argument("--name", default="case-worker")
        parser.add_argument("--loglevel", default="INFO")
        parser.add_argument(
            "--beat", action="store_true", help="also run the periodic scheduler (`make run` only)"
        )

    def handle(self, *args, **options):
        # The service's Celery app, made current when Django loaded `casemgmt.config` (ops sits below
        # config in the app layers, so it does not import it).
        app = current_app._get_current_object()
        argv = [
            "worker", "-Q", options["queues"], "-c", str(options["concurrency"]), "-P", options["pool"],
            "-n", f"{options['name']}@{socket.gethostname()}", "-l", options["loglevel"],
            "--without-gossip", "--without-mingle", "--without-heartbeat",
        ]  # fmt: skip
        settings.VAR_DIR.mkdir(parents=True, exist_ok=True)
        app.conf.update(broker_outage_options(dict(app.conf.broker_transport_options or {})))
        if options["beat"]:  # a thread of this process, not a process of its own (shared.worker)
            beat_in_thread(app, str(settings.VAR_DIR / "beat-schedule"))
        run_supervised(
            app, argv, label="case worker", min_uptime_seconds=settings.WORKER_RESTART_MIN_UPTIME_SECONDS
        )
