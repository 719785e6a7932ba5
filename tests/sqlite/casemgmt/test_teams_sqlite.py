"""Teams, strategies, out of office, bulk actions and comments on SQLite (`make run`): the
PostgreSQL suite's tests, run here unchanged. accessTeams has no row-level security here: the
selectors and the report connection's views apply it, tested below."""

import pytest

from tests.casemgmt.cases.conftest import case_type, make_case, reader  # noqa: F401 - fixtures
from tests.casemgmt.cases.test_comments import (  # noqa: F401 - collected here too
    test_comments_are_stored_as_given_listed_oldest_first_and_audited,
)
from tests.casemgmt.console.conftest import signed_in
from tests.casemgmt.console.test_user_pages import _chart_data
from tests.casemgmt.reports.test_report_queries import run
from tests.casemgmt.workflows.conftest import flow, ok  # noqa: F401 - fixture
from tests.casemgmt.workflows.test_access_teams import restricted_setup
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


def test_access_teams_on_sqlite_hide_the_detail_list_inbox_and_task(flow, api, make_user, tenant):  # noqa: F811
    """No row-level security here: the selectors' filter keeps the main read paths closed."""
    member, outsider, open_case, secret, _ = restricted_setup(flow, make_user, tenant)
    them, me = api(outsider), api(member)
    assert them.get(f"/cases/{secret['id']}").status_code == 404
    assert me.get(f"/cases/{secret['id']}").status_code == 200
    assert {c["id"] for c in ok(them.get("/cases"))["data"]} == {open_case["id"]}
    assert {t["caseId"] for t in ok(them.get("/tasks/inbox"))["data"]} == {open_case["id"]}
    assert len(ok(me.get("/tasks/inbox"))["data"]) == 2
    assert them.get(f"/tasks/{secret['id']}/review").status_code == 404


def test_access_teams_on_sqlite_hide_search_dashboard_and_reports(flow, api, make_user, tenant):  # noqa: F811
    """Search, the dashboards, the report figures and report queries count a restricted type's
    cases for its teams' members and admin:* only."""
    member, outsider, open_case, secret, _ = restricted_setup(flow, make_user, tenant)
    them, me, admin = api(outsider), api(member), flow.client
    both = {open_case["id"], secret["id"]}

    def search_ids(client):
        return {hit["id"] for hit in ok(client.get("/cases/search?q=zebraword"))["data"]}

    assert search_ids(them) == {open_case["id"]}
    assert search_ids(me) == both and search_ids(admin) == both
    assert ok(them.get("/cases/search?q=zebraword"))["total"] == 1

    def counted(client, url, field):
        body = ok(client.get(url))
        return sum(body[field].values()) if isinstance(body[field], dict) else body[field]

    for url, field in [
        ("/cases/dashboard", "byStatus"),
        ("/cases/dashboard", "byType"),
        ("/reports/dashboard", "byStatus"),
        ("/reports/summary", "totalCases"),
    ]:
        assert counted(them, url, field) == 1, url
        assert counted(me, url, field) == 2 and counted(admin, url, field) == 2, url
    assert set(ok(them.get("/cases/dashboard"))["byType"]) == {flow.key}

    def queried(client, sql):
        return {row["id"] for row in run(client, sql)["data"]}

    assert queried(them, "SELECT id FROM cases") == {open_case["id"]}
    assert queried(them, "SELECT case_id AS id FROM tasks") == {open_case["id"]}
    crafted = f"SELECT id FROM cases WHERE id = '{secret['id']}'"
    assert queried(them, crafted) == set()
    assert queried(me, "SELECT id FROM cases") == both and queried(admin, "SELECT id FROM cases") == both
    assert queried(me, "SELECT case_id AS id FROM tasks") == both

    for user, sees_secret in ((outsider, False), (member, True)):  # the console's search and charts
        console = signed_in(user)
        charts = _chart_data(console.get("/console/dashboard").content.decode())
        assert sum(charts["status"]["values"]) == (2 if sees_secret else 1)
        found = console.get("/console/cases?q=zebraword").content.decode()
        assert open_case["id"] in found and (secret["id"] in found) == sees_secret
