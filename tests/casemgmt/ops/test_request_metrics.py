"""The request and database metrics keep django-prometheus's names, labels and values (they are
updated through children looked up once: shared.web.metrics, shared.db.postgresql)."""

from __future__ import annotations

import pytest
from django.db import DataError, connection, transaction
from prometheus_client import REGISTRY

pytestmark = pytest.mark.django_db

DATABASE = {"alias": "default", "vendor": "postgresql"}


def value(name: str, labels: dict[str, str] | None = None) -> float:
    return REGISTRY.get_sample_value(name, labels or {}) or 0.0


def test_a_request_updates_the_http_and_database_metrics(api, admin_user):
    client = api(admin_user)
    view = {"view": "cases", "method": "GET"}
    names = [
        ("django_http_requests_total_by_method_total", {"method": "GET"}),
        ("django_http_requests_total_by_view_transport_method_total", {**view, "transport": "http"}),
        ("django_http_responses_total_by_status_view_method_total", {**view, "status": "200"}),
        ("django_http_requests_latency_seconds_by_view_method_count", view),
        ("django_http_requests_latency_including_middlewares_seconds_count", {}),
        ("django_http_responses_body_total_bytes_count", {}),
    ]
    before = {name: value(name, labels) for name, labels in names}
    statements = value("django_db_execute_total", DATABASE)
    timed = value("django_db_query_duration_seconds_count", DATABASE)

    assert client.get("/cases").status_code == 200

    assert {name: value(name, labels) - before[name] for name, labels in names} == {
        name: 1 for name, _ in names
    }
    ran = value("django_db_execute_total", DATABASE) - statements
    assert ran >= 3 and value("django_db_query_duration_seconds_count", DATABASE) - timed == ran


def test_a_failed_statement_is_counted_by_its_error_type():
    errors = {**DATABASE, "type": "DivisionByZero"}
    before = value("django_db_errors_total", errors)
    with pytest.raises(DataError), transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SELECT 1 / 0")
    assert value("django_db_errors_total", errors) == before + 1
