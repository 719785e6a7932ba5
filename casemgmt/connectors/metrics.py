"""Connector series on /metrics, computed from the invocation log at scrape time.

Invocations run in web processes (test calls) and in every Celery worker process; counting in
process memory would show each scrape only the web process's share. The invocation log is the one
place all of them write, so the collector reads its totals from there: the counters are exact and
survive restarts."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import Any

from django.db import DatabaseError
from django.db.models import Count, Q, Sum
from prometheus_client.core import CounterMetricFamily, HistogramMetricFamily
from prometheus_client.registry import REGISTRY, Collector

from casemgmt.connectors.models import Invocation

logger = logging.getLogger(__name__)
BUCKETS = (0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)


def _rows() -> list[dict[str, Any]]:
    buckets = {f"le_{i}": Count("id", filter=Q(latency_ms__lte=b * 1000)) for i, b in enumerate(BUCKETS)}
    return list(
        Invocation.objects.values("connector", "action")
        .annotate(
            total=Count("id"), errors=Count("id", filter=Q(success=False)), ms=Sum("latency_ms"), **buckets
        )
        .order_by("connector", "action")
    )


LABELS = ["connector", "action"]


def _families() -> tuple[CounterMetricFamily, CounterMetricFamily, HistogramMetricFamily]:
    return (
        CounterMetricFamily(
            "service_connector_invocations", "Connector invocations (each attempt).", labels=LABELS
        ),
        CounterMetricFamily("service_connector_errors", "Failed connector invocations.", labels=LABELS),
        HistogramMetricFamily(
            "service_connector_latency_seconds", "Connector invocation latency.", labels=LABELS
        ),
    )


class ConnectorCollector(Collector):
    def describe(self) -> Iterator[Any]:
        # Registration asks for the metric names; answering here keeps it from querying the
        # database at start-up (collect() would).
        yield from _families()

    def collect(self) -> Iterator[Any]:
        invocations, errors, latency = _families()
        try:
            rows = _rows()
        except DatabaseError:
            logger.warning("connector metrics unavailable: the invocation log could not be read")
            rows = []
        for row in rows:
            key = [row["connector"], row["action"]]
            invocations.add_metric(key, row["total"])
            errors.add_metric(key, row["errors"])
            cumulative = [(str(b), row[f"le_{i}"]) for i, b in enumerate(BUCKETS)] + [("+Inf", row["total"])]
            latency.add_metric(key, cumulative, (row["ms"] or 0) / 1000)
        yield from (invocations, errors, latency)


_registered = False


def register() -> None:
    global _registered
    if not _registered:
        REGISTRY.register(ConnectorCollector())
        _registered = True
