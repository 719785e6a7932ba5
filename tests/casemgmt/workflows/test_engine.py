"""Engine semantics: conditions skip steps, joins wait for every branch."""

from __future__ import annotations

import pytest

from tests.casemgmt.workflows.conftest import ok, task_step

pytestmark = pytest.mark.django_db


def complete(flow, case_id, step_id, **data):
    ok(
        flow.client.post(
            f"/tasks/{case_id}/{step_id}/complete", {"data": {"approved": True, **data}}, format="json"
        )
    )


def test_false_condition_skips_a_step_and_its_dependents_move_on(flow):
    flow.workflow(
        [
            task_step("review"),
            task_step("senior", condition="{{#if (gt case_data.amount 1000)}}yes{{/if}}"),
            task_step("payout"),
        ]
    )
    small = flow.case({"amount": 10})
    big = flow.case({"amount": 5000})
    for case in (small, big):
        complete(flow, case["id"], "review")
    assert flow.statuses(small["id"]) == {"review": "completed", "senior": "skipped", "payout": "active"}
    assert flow.statuses(big["id"]) == {"review": "completed", "senior": "active", "payout": "pending"}


def test_conditions_see_step_results(flow):
    flow.workflow(
        [
            task_step("review"),
            task_step("appeal", condition='equals step_results.review.note "appeal"'),
            task_step(
                "close",
                dependsOn=["review"],
                condition='{{#unless (equals step_results.review.note "appeal")}}1{{/unless}}',
            ),
        ]
    )
    appealed, plain = flow.case(), flow.case()
    complete(flow, appealed["id"], "review", note="appeal")
    complete(flow, plain["id"], "review", note="fine")
    assert flow.statuses(appealed["id"]) == {"review": "completed", "appeal": "active", "close": "skipped"}
    assert flow.statuses(plain["id"]) == {"review": "completed", "appeal": "skipped", "close": "active"}


def test_condition_on_the_first_step_is_evaluated_at_creation(flow):
    flow.workflow([task_step("fraud", condition="gte case_data.amount 100"), task_step("pay")])
    assert flow.statuses(flow.case({"amount": 99})["id"]) == {"fraud": "skipped", "pay": "active"}
    assert flow.statuses(flow.case({"amount": 100})["id"]) == {"fraud": "active", "pay": "pending"}


def test_diamond_join_activates_only_after_both_branches(flow):
    flow.workflow(
        [
            task_step("start"),
            task_step("left", dependsOn=["start"]),
            task_step("right", dependsOn=["start"]),
            task_step("join", dependsOn=["left", "right"]),
        ]
    )
    case = flow.case()
    complete(flow, case["id"], "start")
    assert flow.statuses(case["id"]) == {
        "start": "completed",
        "left": "active",
        "right": "active",
        "join": "pending",
    }
    complete(flow, case["id"], "left")
    assert flow.statuses(case["id"])["join"] == "pending"
    complete(flow, case["id"], "right")
    assert flow.statuses(case["id"])["join"] == "active"


def test_a_skipped_branch_counts_as_done_for_the_join(flow):
    flow.workflow(
        [
            task_step("left", dependsOn=[]),
            task_step("right", dependsOn=[], condition="false"),
            task_step("join", dependsOn=["left", "right"]),
        ]
    )
    case = flow.case()
    assert flow.statuses(case["id"]) == {"left": "active", "right": "skipped", "join": "pending"}
    complete(flow, case["id"], "left")
    assert flow.statuses(case["id"])["join"] == "active"


def test_step_results_hold_completed_task_data(flow):
    from casemgmt.cases.models import Case
    from casemgmt.workflows.selectors import step_results

    flow.workflow([task_step("review"), task_step("pay")])
    case = flow.case()
    complete(flow, case["id"], "review", note="ok")
    assert step_results(Case.objects.get(id=case["id"])) == {"review": {"approved": True, "note": "ok"}}
