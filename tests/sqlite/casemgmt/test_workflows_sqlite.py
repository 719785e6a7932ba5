"""Workflow races on SQLite: the PostgreSQL suite's race tests, run here unchanged. PostgreSQL
settles them with row locks (`select_for_update`), which SQLite ignores; there, immediate
transactions admit one writer at a time, and the outcome must be the same."""

import pytest

from tests.casemgmt.workflows.conftest import flow  # noqa: F401 - fixture
from tests.casemgmt.workflows.test_concurrency import (  # noqa: F401 - collected here too
    test_concurrent_claims_exactly_one_wins,
    test_concurrent_completions_of_a_diamond_activate_the_join_once,
    test_concurrent_publishes_leave_exactly_one_default,
    test_sla_job_escalates_once_when_run_twice_or_concurrently,
)

pytestmark = pytest.mark.django_db(transaction=True)
