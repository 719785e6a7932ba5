"""Report queries with the answers they must give, the same on PostgreSQL and on SQLite: column
names, JSON types and values (the two suites run this one list)."""

from __future__ import annotations

from typing import Any

from casemgmt.cases.models import Case
from casemgmt.workflows.models import CaseStep


def iso(value) -> str:
    return value.isoformat().replace("+00:00", "Z")


def parity_queries(world) -> list[tuple[str, Any]]:
    fresh, on_time, late, _overdue, cancelled, _active = (Case.objects.get(pk=c.pk) for c in world.cases)
    task = CaseStep.objects.get(case_id=fresh.pk, is_task=True)
    with_tasks = list(
        CaseStep.objects.filter(is_task=True, case__tenant=world.tenant).values_list("case_id", flat=True)
    )
    return [
        (
            "SELECT status, count(*) FROM cases GROUP BY status ORDER BY status",
            [
                {"status": "active", "count": 3},
                {"status": "cancelled", "count": 1},
                {"status": "closed", "count": 2},
            ],
        ),
        (
            "SELECT data->>'title' AS title, (data->>'amount')::numeric AS amount, data->'amount' AS raw, data,"
            " data->>'amount' AS text_amount FROM cases WHERE data->>'amount' = '1'",
            [
                {
                    "title": "claim 1",
                    "amount": 1,
                    "raw": 1,
                    "data": {"amount": 1, "title": "claim 1"},
                    "text_amount": "1",
                }
            ],
        ),
        (
            "SELECT count(*) FILTER (WHERE escalated) AS escalated, bool_or(escalated) AS any, count(*) FROM tasks",
            [{"escalated": 0, "any": False, "count": len(with_tasks)}],
        ),
        (
            "SELECT round(extract(epoch FROM closed_at - created_at)) AS took, closed_at - created_at AS span"
            " FROM cases WHERE status = 'closed' ORDER BY created_at",
            [{"took": 3 * 3600, "span": 3 * 3600.0}, {"took": 3600, "span": 3600.0}],
        ),
        (
            "SELECT id, created_at, max(closed_at) FROM cases WHERE created_at < now() - interval '3 hours'"
            " GROUP BY id, created_at",
            [{"id": str(late.id), "created_at": iso(late.created_at), "max": iso(late.closed_at)}],
        ),
        (
            "SELECT count(*) AS n FROM cases WHERE created_at > '2000-01-01T00:00:00Z'"
            " AND sla_deadline < now() AND sla_deadline + interval '1 month' > now()",
            [{"n": 2}],
        ),
        (
            f"SELECT c.case_number, t.name, t.status, t.id AS task FROM cases c JOIN tasks t ON t.case_id = c.id"
            f" WHERE c.id = '{fresh.id}'",
            [{"case_number": fresh.case_number, "name": task.name, "status": task.status, "task": task.id}],
        ),
        (
            "SELECT coalesce(closed_at, sla_deadline) IS NOT NULL AS has_date, greatest(case_type_version, 0) AS v,"
            " upper(case_type) AS kind, jsonb_typeof(data) AS t, 1 + 1, status = 'cancelled' AS gone"
            " FROM cases WHERE data->>'amount' = '7'",
            [{"has_date": True, "v": 1, "kind": "COMPLAINT", "t": "object", "?column?": 2, "gone": True}],
        ),
        (
            "SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY (data->>'amount')::numeric) AS median,"
            " avg((data->>'amount')::numeric) AS mean, array_agg(case_type) AS kinds"
            " FROM cases WHERE case_type = 'complaint'",
            [{"median": 7.5, "mean": 7.5, "kinds": ["complaint", "complaint"]}],
        ),
        (
            "SELECT count(*) AS n FROM cases WHERE id IN (SELECT case_id FROM tasks) AND closed_at IS NULL",
            [{"n": len([c for c in with_tasks if c in (fresh.pk, _overdue.pk)])}],
        ),
        (
            "WITH spans AS (SELECT id, closed_at - created_at AS took FROM cases WHERE closed_at IS NOT NULL)"
            " SELECT count(*) AS n FROM spans WHERE took > interval '2 hours'",
            [{"n": 1}],
        ),
        (
            "SELECT date_trunc('month', created_at) <= created_at AS ok, to_char(created_at, 'YYYY-MM')"
            " = substring(created_at::text from 1 for 7) AS same FROM cases"
            f" WHERE id = '{cancelled.id}'",
            [{"ok": True, "same": True}],
        ),
    ]
