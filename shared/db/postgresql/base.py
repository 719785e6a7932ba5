"""PostgreSQL with django-prometheus's database metrics (same names and labels), for less CPU.

django-prometheus builds a new cursor class each time Django opens a connection (with a pool: on
every request) and, on every statement, looks up two labelled metrics and builds an exception
counter. Here the class is built once per cursor base and database, with its metrics' children
bound to it.
"""

from __future__ import annotations

from functools import cache
from timeit import default_timer
from typing import Any

from django.db.backends.postgresql import base
from django_prometheus.db import errors_total, execute_many_total, execute_total, query_duration_seconds
from django_prometheus.db.backends.postgresql import base as exported


class DatabaseWrapper(exported.DatabaseWrapper):
    def get_connection_params(self) -> dict[str, Any]:
        params: dict[str, Any] = base.DatabaseWrapper.get_connection_params(self)
        params["cursor_factory"] = counting_cursor(params["cursor_factory"], self.alias, self.vendor)
        return params


@cache
def counting_cursor(cursor_class: type, alias: str, vendor: str) -> type:
    executed = execute_total.labels(alias, vendor)
    executed_many = execute_many_total.labels(alias, vendor)
    duration = query_duration_seconds.labels(alias, vendor)

    def failed(exc: BaseException) -> None:
        errors_total.labels(alias, vendor, type(exc).__name__).inc()

    class CountingCursor(cursor_class):
        def execute(self, *args: Any, **kwargs: Any) -> Any:
            executed.inc()
            started = default_timer()
            try:
                return super().execute(*args, **kwargs)
            except BaseException as exc:
                failed(exc)
                raise
            finally:
                duration.observe(default_timer() - started)

        def executemany(self, query: Any, param_list: Any, *args: Any, **kwargs: Any) -> Any:
            executed.inc(len(param_list))
            executed_many.inc(len(param_list))
            started = default_timer()
            try:
                return super().executemany(query, param_list, *args, **kwargs)
            except BaseException as exc:
                failed(exc)
                raise
            finally:
                duration.observe(default_timer() - started)

    return CountingCursor
