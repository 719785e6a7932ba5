"""Ticks the time schedules until stopped (SIGINT/SIGTERM), or once with --once. Any number may run
beside the agents' own scheduler threads: the database keeps each fire time to one run."""

import signal

from django.core.management.base import BaseCommand

from orchestrator.schedules.firing import schedules_tick
from orchestrator.schedules.loop import SchedulerLoop, default_ticker_name


class Command(BaseCommand):
    help = "Fire due time schedules every ORCH_SCHEDULER_TICK_SECONDS."

    def add_arguments(self, parser):
        parser.add_argument("--name", default=default_ticker_name(), help="name shown in /api/status")
        parser.add_argument("--period", type=float, default=None, help="seconds between ticks")
        parser.add_argument("--once", action="store_true", help="tick once and exit")

    def handle(self, *args, **options):
        if options["once"]:
            made = schedules_tick(ticker=options["name"])
            self.stdout.write(f"{made} run(s) made")
            return
        loop = SchedulerLoop(name=options["name"], period=options["period"])
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, lambda *_: loop.stop.set())
        self.stdout.write(f"scheduler {loop.name} ticking every {loop.period} s")
        self.stdout.flush()
        loop.run()
