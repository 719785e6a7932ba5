"""Run and task-run figures for Prometheus `/metrics`, read from the database at scrape time.

A custom collector rather than in-process counters: runs finish in agent processes, so only the
database knows the totals, and every web replica then reports the same numbers.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from datetime import timedelta

from django.db.models import Count, DurationField, ExpressionWrapper, F, Q, Sum
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily
from prometheus_client.registry import REGISTRY, Collector

from orchestrator.runs.models import Run, TaskRun
from orchestrator.system import selectors
from orchestrator.system.selectors import FINISHED, to_seconds
from orchestrator.webhooks.models import Delivery

logger = logging.getLogger(__name__)
DURATION_BUCKETS = (1, 5, 15, 60, 300, 900, 3600)


def _duration_histogram(name: str, doc: str, model: type[Run] | type[TaskRun]) -> HistogramMetricFamily:
    duration = ExpressionWrapper(F("end_time") - F("start_time"), output_field=DurationField())
    rows = model.objects.filter(
        status__in=FINISHED, start_time__isnull=False, end_time__isnull=False
    ).annotate(d=duration)
    aggregates = {f"le_{b}": Count("pk", filter=Q(d__lte=timedelta(seconds=b))) for b in DURATION_BUCKETS}
    stats = rows.aggregate(total=Count("pk"), sum=Sum("d"), **aggregates)
    buckets = [(str(float(b)), stats[f"le_{b}"]) for b in DURATION_BUCKETS] + [("+Inf", stats["total"])]
    family = HistogramMetricFamily(name, doc, unit="seconds")
    family.add_metric([], buckets, to_seconds(stats["sum"]))
    return family


class OrchestratorCollector(Collector):
    def describe(self) -> list:
        return []  # no collection at registration time (the database may not be ready)

    def collect(self) -> Iterator:
        try:
            yield from self._collect()
        except Exception:  # a scrape must never fail because the database is briefly away
            logger.warning("orchestrator metrics unavailable", exc_info=True)

    def _collect(self) -> Iterator:
        tasks = selectors.status_counts(TaskRun, selectors.TASK_STATES)
        runs = selectors.status_counts(Run, selectors.RUN_STATES)
        yield _by_status("orchestrator_task_runs", "Task runs by current status.", tasks)
        yield _by_status("orchestrator_runs", "Runs by current status.", runs)
        finished_tasks = CounterMetricFamily(
            "orchestrator_task_runs_finished", "Task runs finished, by outcome.", labels=["status"]
        )
        finished_runs = CounterMetricFamily(
            "orchestrator_runs_finished", "Runs finished, by outcome.", labels=["status"]
        )
        for status in ("completed", "failed", "cancelled"):
            finished_tasks.add_metric([status], tasks[status])
            finished_runs.add_metric([status], runs[status])
        yield finished_tasks
        yield finished_runs
        yield _duration_histogram(
            "orchestrator_task_run_duration", "Duration of finished task runs.", TaskRun
        )
        yield _duration_histogram("orchestrator_run_duration", "Duration of finished runs.", Run)
        agents = selectors.agent_counts()
        agent_gauge = GaugeMetricFamily("orchestrator_agents", "Agents by liveness.", labels=["state"])
        agent_gauge.add_metric(["active"], agents["active"])
        agent_gauge.add_metric(["inactive"], agents["inactive"])
        yield agent_gauge
        queue_gauge = GaugeMetricFamily(
            "orchestrator_queue_length", "Task runs waiting in each queue.", labels=["queue"]
        )
        for queue in selectors.queue_lengths():
            queue_gauge.add_metric([queue["name"]], queue["length"])
        yield queue_gauge
        deliveries = dict(
            Delivery.objects.values_list("status").annotate(n=Count("pk")).values_list("status", "n")
        )
        delivery_gauge = GaugeMetricFamily(
            "orchestrator_webhook_deliveries", "Webhook deliveries by status.", labels=["status"]
        )
        for status, _ in Delivery.STATUSES:
            delivery_gauge.add_metric([status], deliveries.get(status, 0))
        yield delivery_gauge


def _by_status(name: str, doc: str, counts: dict[str, int]) -> GaugeMetricFamily:
    gauge = GaugeMetricFamily(name, doc, labels=["status"])
    for status, value in counts.items():
        if status != "total":
            gauge.add_metric([status], value)
    return gauge


_registered = False


def register() -> None:
    global _registered
    if not _registered:
        REGISTRY.register(OrchestratorCollector())
        _registered = True
