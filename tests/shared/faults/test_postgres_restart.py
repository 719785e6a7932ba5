"""PostgreSQL killed and started again under write load on both services (the bounded version of
`bench/faults/postgres_restart.py`): every acknowledged write is there afterwards, the APIs answer
503 (never another 5xx) while it is down, and they recover by themselves, the case worker and beat too."""

from __future__ import annotations

import pytest

from bench.faults import postgres_restart

pytestmark = [pytest.mark.worker]


def test_a_postgres_restart_under_load_loses_no_acknowledged_write_and_answers_503():
    rows = postgres_restart.run(restarts=1, down_seconds=2.0)
    for row in rows:
        figures = row.values
        assert figures["restarts"] == 1 and figures["acknowledged"] > 0, (row.name, figures)
        assert (figures["lost"], figures["duplicated"]) == (0, 0), (row.name, figures)
        assert figures["503 while down"] > 0, (row.name, figures)
        assert figures["5xx other than 503"] == 0, (row.name, figures)
    case = rows[0].values
    assert case["case worker survived"].startswith("yes") and case["case beat survived"] == "yes", case
