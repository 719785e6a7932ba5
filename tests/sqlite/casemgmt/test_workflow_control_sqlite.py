"""Workflow control on SQLite (`make run`): rework, timers (also swept concurrently), waits,
sub-cases and migration, the PostgreSQL suite's tests run here unchanged. The case detail reads its
parent, children and history through the workflows app's `family_of` here, not the one SQL
statement PostgreSQL uses."""

import pytest

from tests.casemgmt.workflows.conftest import flow  # noqa: F401 - fixture
from tests.casemgmt.workflows.test_concurrency import (  # noqa: F401 - collected here too
    test_due_timers_fire_once_when_swept_twice_or_concurrently,
)
from tests.casemgmt.workflows.test_workflow_control import (  # noqa: F401 - collected here too
    test_a_child_case_cancelled_fails_the_parent_step_as_on_failure_says,
    test_a_child_case_closed_completes_the_parent_step,
    test_a_message_completes_the_waiting_step,
    test_a_rework_loop_taken_twice_then_approved,
    test_a_timer_fires_once_when_its_time_comes,
    test_a_timer_until_a_time_from_case_data_and_one_that_cannot_render,
)
from tests.casemgmt.workflows.test_workflow_migration import (  # noqa: F401 - collected here too
    test_completed_steps_keep_their_results_and_new_steps_activate,
)

pytestmark = pytest.mark.django_db(transaction=True)
