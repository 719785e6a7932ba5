"""django-prometheus's request metrics, the same names, labels and values, for less CPU.

Its after-middleware updates about ten labelled metrics per request, and most of their cost was
`labels()`: checking the arguments and taking the metric's lock to find the child for those label
values. The children are found once per label values here and kept, so a request pays only the
updates themselves. (A label set seen once stays in prometheus_client's registry anyway: keeping a
reference to its child costs nothing more.)
"""

from __future__ import annotations

import threading
from typing import Any

from django_prometheus import middleware

_children: dict[tuple[int, tuple[tuple[str, Any], ...]], Any] = {}
_lock = threading.Lock()


def labelled(metric: Any, labels: dict[str, Any]) -> Any:
    """`metric.labels(**labels)`, looked up once per label values."""
    key = (id(metric), tuple(labels.items()))
    child = _children.get(key)
    if child is None:
        with _lock:
            child = _children.setdefault(key, metric.labels(**labels))
    return child


class PrometheusBeforeMiddleware(middleware.PrometheusBeforeMiddleware):
    """Unchanged (its metrics have no labels); here so both ends are configured from one module."""


class PrometheusAfterMiddleware(middleware.PrometheusAfterMiddleware):
    def label_metric(self, metric: Any, request: Any, response: Any = None, **labels: Any) -> Any:
        return labelled(metric, labels) if labels else metric
