"""Redis killed (and started again empty) under load on both services (the bounded version of
`bench/faults/redis_restart.py`): agents survive, task runs and webhook deliveries are sent again
from the database with none lost or doubled, the case worker and beat ride it out, acknowledged cases are there, logout and lockout
hold, and no answer is a 5xx other than 503."""

from __future__ import annotations

import pytest

from bench.faults import redis_restart

pytestmark = [pytest.mark.worker]


def test_a_redis_restart_under_load_loses_and_doubles_nothing():
    runs, hooks, case = (row.values for row in redis_restart.run(restarts=1, down_seconds=2.0, timeout=300))
    assert runs["acknowledged"] > 0 and runs["agents survived"] == "2/2", runs
    assert (runs["lost"], runs["duplicated"], runs["5xx other than 503"]) == (0, 0, 0), runs
    assert hooks["acknowledged"] > 0 and (hooks["lost"], hooks["duplicated"]) == (0, 0), hooks
    assert case["acknowledged"] > 0 and (case["lost"], case["duplicated"]) == (0, 0), case
    assert case["5xx other than 503"] == 0 and case["security state kept"] == "yes", case
    assert case["case worker survived"] == "yes (0 restarts)" and case["case beat survived"] == "yes", case
