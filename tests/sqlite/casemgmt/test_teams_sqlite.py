"""Teams, strategies, out of office, bulk actions and comments on SQLite (`make run`): the
PostgreSQL suite's tests, run here unchanged (accessTeams needs row-level security: PostgreSQL only)."""

import pytest

from tests.casemgmt.cases.conftest import case_type, make_case, reader  # noqa: F401 - fixtures
from tests.casemgmt.cases.test_comments import (  # noqa: F401 - collected here too
    test_comments_are_stored_as_given_listed_oldest_first_and_audited,
)
from tests.casemgmt.workflows.conftest import flow  # noqa: F401 - fixture
from tests.casemgmt.workflows.test_assignment import (  # noqa: F401 - collected here too
    test_delegation_while_absent_and_not_after,
    test_round_robin_skips_absent_members_and_least_loaded_balances,
    test_round_robin_under_concurrent_activation,
)
from tests.casemgmt.workflows.test_bulk import (  # noqa: F401 - collected here too
    test_bulk_cases_close_and_cancel,
    test_bulk_tasks_by_filter_and_the_request_rules,
)
from tests.casemgmt.workflows.test_teams import (  # noqa: F401 - collected here too
    test_release,
    test_task_step_team_restricts_claim_reassign_and_inbox,
)

pytestmark = pytest.mark.django_db(transaction=True)
