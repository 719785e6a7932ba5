"""The answers every database must give (the SQLite suite runs the same list)."""

from __future__ import annotations

import pytest

from tests.casemgmt.reports.parity import parity_queries
from tests.casemgmt.reports.test_report_queries import run

pytestmark = pytest.mark.django_db


def test_answers_have_the_agreed_names_types_and_values(api, analyst, world, other_world):
    client = api(analyst)
    for query, expected in parity_queries(world):
        assert run(client, query)["data"] == expected, query
