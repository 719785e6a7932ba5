"""POST/GET /cases, GET /cases/{id}, PATCH data, close and cancel through the HTTP API."""

import uuid
from datetime import datetime, timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from casemgmt.audit.models import AuditEvent
from casemgmt.audit.services import verify_tenant_chain
from casemgmt.cases.jsondata import search_text
from casemgmt.cases.models import Case, CaseCounter
from casemgmt.cases.services import case_create, case_type_create
from tests.casemgmt.cases.conftest import VALID_DATA

pytestmark = pytest.mark.django_db


def parse(ts):
    return datetime.fromisoformat(ts.replace("Z", "+00:00"))


def create(client, case_type, data=None, **extra):
    return client.post(
        "/cases", {"caseTypeId": str(case_type.id), "data": data or VALID_DATA, **extra}, format="json"
    )


@pytest.fixture
def creator(tenant, make_user):
    return make_user(tenant, permissions=["cases:create", "cases:read"])


@pytest.fixture
def worker(tenant, make_user):
    return make_user(tenant, roles=["case_worker"])


def test_create_returns_the_case_with_number_deadline_and_etag(api, creator, case_type):
    response = create(api(creator), case_type)
    assert response.status_code == 201, response.json()
    body = response.json()
    assert response["ETag"] == '"1"'
    assert set(body) == {
        "id", "caseNumber", "displayName", "caseTypeId", "caseTypeKey", "workflowVersionId", "status", "data",
        "version", "createdAt", "createdBy", "updatedAt", "slaDeadline", "closedAt", "outcome", "statusReason",
    }  # fmt: skip
    uuid.UUID(body["id"])
    assert body["caseNumber"] == "IC-000001"
    assert body["caseTypeId"] == str(case_type.id) and body["caseTypeKey"] == "insurance_claim"
    assert body["status"] == "active" and body["version"] == 1 and body["data"] == VALID_DATA
    assert body["createdBy"] == str(creator.id)
    assert body["workflowVersionId"] is None  # no published workflow for this case type
    assert body["displayName"] == "Insurance claim IC-000001"
    # slaDeadline = createdAt + the case type's slaHours (48)
    assert parse(body["slaDeadline"]) - parse(body["createdAt"]) == timedelta(hours=48)
    assert body["closedAt"] is None and body["outcome"] is None


def test_create_audits_case_created_in_the_tenant_chain(api, creator, case_type):
    body = create(api(creator), case_type).json()
    event = AuditEvent.objects.get(resource=f"cases/{body['id']}")
    assert (
        event.action == "case:created"
        and event.actor == str(creator.id)
        and event.chain == str(creator.tenant_id)
    )
    assert event.changes["caseNumber"] == "IC-000001"


def test_alternative_body_form_uses_the_latest_version_of_the_key(api, admin_user, creator, case_type):
    newer = case_type_create(
        user=admin_user, key="insurance_claim", display_name="Claim v2", schema={"type": "object"}
    )
    response = api(creator).post(
        "/cases", {"case_type_key": "insurance_claim", "case_data": {"title": "Free form"}}, format="json"
    )
    assert response.status_code == 201, response.json()
    assert response.json()["caseTypeId"] == str(newer.id)
    assert response.json()["displayName"] == "Free form"
    assert response.json()["caseNumber"] == "IC-000001"  # numbering is per key, across versions


def test_schema_failures_are_all_listed_with_json_paths(api, creator, case_type):
    response = create(
        api(creator), case_type, data={"applicant": {"name": ""}, "amount": -5, "tags": ["a", 3]}
    )
    assert response.status_code == 400
    body = response.json()
    assert body["code"] == "validation_error"
    assert {e["field"] for e in body["details"]["errors"]} == {
        "data.applicant.name",
        "data.amount",
        "data.tags[1]",
    }
    assert body["details"]["field"] == body["details"]["errors"][0]["field"]
    missing = create(api(creator), case_type, data={"description": "x"}).json()
    assert {e["field"] for e in missing["details"]["errors"]} == {"data.applicant", "data.amount"}
    assert CaseCounter.objects.get(key="insurance_claim").last_number == 0  # nothing consumed a number


@pytest.mark.parametrize(
    "body",
    [
        {},
        {"caseTypeId": "not-a-uuid", "data": {}},
        {"caseTypeId": "CT", "case_type_key": "insurance_claim"},
        {"case_type_key": "insurance_claim", "case_data": [1]},
    ],
)
def test_malformed_create_bodies_are_400(api, creator, case_type, body):
    if body.get("caseTypeId") == "CT":
        body["caseTypeId"] = str(case_type.id)
    assert api(creator).post("/cases", body, format="json").status_code == 400


def test_malformed_json_is_400(api, creator):
    response = api(creator).post("/cases", "{not json", content_type="application/json")
    assert response.status_code == 400 and response.json()["code"] == "validation_error"


def test_missing_case_type_is_404(api, creator, outsider, other_tenant):
    assert create(api(creator), type("T", (), {"id": uuid.uuid4()})).status_code == 404
    foreign = case_type_create(user=outsider, key="foreign", display_name="F", schema={"type": "object"})
    assert create(api(creator), foreign, data={"a": 1}).status_code == 404
    response = api(creator).post("/cases", {"case_type_key": "nope", "case_data": {}}, format="json")
    assert response.status_code == 404 and response.json()["code"] == "not_found"


def test_unknown_workflow_version_is_400(api, creator, case_type):
    response = create(api(creator), case_type, workflowVersionId=str(uuid.uuid4()))
    assert response.status_code == 400 and response.json()["details"]["field"] == "workflowVersionId"


def test_a_bad_workflow_version_is_reported_before_bad_data(api, creator, case_type):
    response = create(api(creator), case_type, data={"amount": -1}, workflowVersionId=str(uuid.uuid4()))
    assert response.status_code == 400 and response.json()["details"]["field"] == "workflowVersionId"


def test_refused_creates_leave_no_gap_in_the_numbers(api, creator, case_type):
    # Refused before the number is taken (the workflow check) or rolled back with it: no gap.
    assert create(api(creator), case_type, workflowVersionId=str(uuid.uuid4())).status_code == 400
    assert create(api(creator), case_type, data={"amount": -1}).status_code == 400
    assert create(api(creator), case_type).json()["caseNumber"] == "IC-000001"


def test_create_takes_the_number_last_in_one_statement(creator, case_type):
    """Reads first (workflow, tenant SLA and webhook configuration in one statement; the caller's
    teams), under no lock; then one statement that takes the number, inserts the case and appends its
    audit row, and nothing after it but COMMIT (savepoints aside, which only the test's enclosing
    transaction causes): the counter and chain locks are held for one round trip."""
    with CaptureQueriesContext(connection) as queries:
        case_create(user=creator, case_type=case_type, data=dict(VALID_DATA))
    statements = [q["sql"] for q in queries.captured_queries if "SAVEPOINT" not in q["sql"]]
    last, before = statements[-1], statements[:-1]
    assert "casecounter" in last and "INSERT INTO cases_case" in last and "audit_auditevent_append" in last
    assert before and all(s.lstrip().startswith("SELECT") for s in before), before
    assert not any("casecounter" in s or "append" in s for s in before), before
    assert sum("default_sla_hours" in s for s in before) == 1  # the create's own reads: one statement


@pytest.mark.parametrize(
    ("data", "display_name"),
    [
        ({**VALID_DATA, "description": ""}, None),  # named after the case type and its number
        ({**VALID_DATA, "title": "  Hail on the roof  "}, None),  # named from the data
        ({**VALID_DATA, "description": "x" * 250_000}, "Given name"),  # the search text capped
    ],
)
def test_the_number_statement_stores_what_the_python_rules_give(creator, case_type, data, display_name):
    """The case's name and search text are built in SQL with the number; they equal `search_text`'s
    and the default name's Python rules (SQLite's path), and the audit row carries the number."""
    case = case_create(user=creator, case_type=case_type, data=data, display_name=display_name)
    stored = Case.objects.get(pk=case.pk)
    expected_name = display_name or (data.get("title") or "").strip() or f"{case_type.display_name} IC-000001"
    assert stored.case_number == case.case_number == "IC-000001"
    assert stored.display_name == case.display_name == expected_name
    assert (
        stored.search_text
        == case.search_text
        == search_text(case_number="IC-000001", display_name=expected_name, data=data)
    )
    event = AuditEvent.objects.get(resource=f"cases/{case.id}", action="case:created")
    assert event.changes["caseNumber"] == "IC-000001"
    assert verify_tenant_chain(tenant_id=creator.member_tenant_id).is_valid


def test_create_permissions(api, reader, case_type):
    assert create(api(reader), case_type).status_code == 403
    assert create(api(None), case_type).status_code == 401


def test_case_numbers_grow_past_six_digits(api, creator, case_type):
    CaseCounter.objects.filter(key="insurance_claim").update(last_number=999_999)
    assert create(api(creator), case_type).json()["caseNumber"] == "IC-1000000"


def test_detail_has_workflow_and_etag_and_is_tenant_scoped(api, reader, outsider, make_case):
    case = make_case()
    response = api(reader).get(f"/cases/{case.id}")
    assert response.status_code == 200 and response["ETag"] == '"1"'
    body = response.json()
    assert body["caseNumber"] == case.case_number and body["workflow"] is None and body["data"] == VALID_DATA
    assert api(outsider).get(f"/cases/{case.id}").status_code == 404
    assert api(reader).get(f"/cases/{uuid.uuid4()}").status_code == 404
    assert api(None).get(f"/cases/{case.id}").status_code == 401


# --- PATCH /cases/{id}/data -------------------------------------------------------------------


def patch(client, case, body, **headers):
    return client.patch(f"/cases/{case.id}/data", body, format="json", **headers)


def test_patch_merges_validates_bumps_version_and_audits_the_diff(api, worker, make_case):
    case = make_case(data={**VALID_DATA, "tags": ["a", "b"], "applicant": {"name": "Ada", "email": "a@x"}})
    response = patch(
        api(worker),
        case,
        {"data": {"amount": 200, "tags": ["c"], "applicant": {"email": None}}, "version": 1},
    )
    assert response.status_code == 200, response.json()
    body = response.json()
    assert body["version"] == 2 and response["ETag"] == '"2"'
    assert body["data"] == {
        "applicant": {"name": "Ada"},
        "amount": 200,
        "description": "hail damage",
        "tags": ["c"],
    }
    event = AuditEvent.objects.filter(resource=f"cases/{case.id}", action="case:updated").get()
    assert event.actor == str(worker.id)
    assert event.changes == {
        "before": {"amount": 120, "applicant.email": "a@x", "tags": ["a", "b"]},
        "after": {"amount": 200, "applicant.email": None, "tags": ["c"]},
        "version": 2,
    }


def test_patch_version_from_if_match(api, worker, make_case):
    case = make_case()
    assert patch(api(worker), case, {"data": {"amount": 1}}, HTTP_IF_MATCH='"1"').status_code == 200
    stale = patch(api(worker), case, {"data": {"amount": 2}}, HTTP_IF_MATCH='"1"')
    assert stale.status_code == 409 and stale.json()["code"] == "version_conflict"
    assert patch(api(worker), case, {"data": {"amount": 2}}, HTTP_IF_MATCH="abc").status_code == 400
    any_version = patch(api(worker), case, {"data": {"amount": 3}}, HTTP_IF_MATCH="*")
    assert any_version.status_code == 200 and any_version.json()["version"] == 3


def test_stale_version_is_409_and_nothing_changes(api, worker, make_case):
    case = make_case()
    response = patch(api(worker), case, {"data": {"amount": 5}, "version": 7})
    assert response.status_code == 409 and response.json()["code"] == "version_conflict"
    case.refresh_from_db()
    assert case.version == 1 and case.data["amount"] == 120
    assert not AuditEvent.objects.filter(action="case:updated").exists()


def test_invalid_merged_result_is_400_and_nothing_changes(api, worker, make_case):
    case = make_case()
    response = patch(api(worker), case, {"data": {"amount": -1, "applicant": None}, "version": 1})
    assert response.status_code == 400
    assert {e["field"] for e in response.json()["details"]["errors"]} == {"data.amount", "data.applicant"}
    case.refresh_from_db()
    assert case.version == 1 and case.data == VALID_DATA


@pytest.mark.parametrize(
    "body", [{}, {"data": [1]}, {"data": {}, "version": 0}, {"data": {}, "version": "x"}]
)
def test_malformed_patch_is_400(api, worker, make_case, body):
    assert patch(api(worker), make_case(), body).status_code == 400


def test_patch_permissions(api, reader, outsider, make_case):
    case = make_case()
    assert patch(api(reader), case, {"data": {"amount": 1}}).status_code == 403
    assert patch(api(outsider), case, {"data": {"amount": 1}}).status_code == 404
    assert patch(api(None), case, {"data": {"amount": 1}}).status_code == 401


# --- close / cancel ---------------------------------------------------------------------------


def test_close_then_close_again_is_invalid_state(api, worker, make_case):
    case = make_case()
    response = api(worker).post(
        f"/cases/{case.id}/close", {"reason": "paid", "outcome": "approved"}, format="json"
    )
    assert response.status_code == 200, response.json()
    body = response.json()
    assert body["status"] == "closed" and body["outcome"] == "approved" and body["statusReason"] == "paid"
    assert body["closedAt"].endswith("Z")
    assert AuditEvent.objects.filter(resource=f"cases/{case.id}", action="case:closed").count() == 1
    again = api(worker).post(f"/cases/{case.id}/close", {}, format="json")
    assert again.status_code == 409 and again.json()["code"] == "invalid_state"
    cancel = api(worker).post(f"/cases/{case.id}/cancel", {}, format="json")
    assert cancel.status_code == 409 and cancel.json()["code"] == "invalid_state"
    frozen = patch(api(worker), case, {"data": {"amount": 1}})
    assert frozen.status_code == 409 and frozen.json()["code"] == "invalid_state"


def test_cancel(api, worker, make_case):
    case = make_case()
    response = api(worker).post(f"/cases/{case.id}/cancel", {"reason": "duplicate"}, format="json")
    assert response.status_code == 200
    assert response.json()["status"] == "cancelled" and response.json()["statusReason"] == "duplicate"
    assert AuditEvent.objects.filter(resource=f"cases/{case.id}", action="case:cancelled").count() == 1
    assert api(worker).post(f"/cases/{case.id}/cancel", {}, format="json").status_code == 409


def test_close_and_cancel_permissions_and_input(api, reader, outsider, worker, make_case):
    case = make_case()
    for action in ("close", "cancel"):
        assert api(reader).post(f"/cases/{case.id}/{action}", {}, format="json").status_code == 403
        assert api(outsider).post(f"/cases/{case.id}/{action}", {}, format="json").status_code == 404
        assert api(None).post(f"/cases/{case.id}/{action}", {}, format="json").status_code == 401
    long_outcome = api(worker).post(f"/cases/{case.id}/close", {"outcome": "x" * 201}, format="json")
    assert long_outcome.status_code == 400


# --- GET /cases -------------------------------------------------------------------------------


def test_list_items_fields_paging_and_absolute_next(api, reader, make_case):
    cases = [make_case() for _ in range(3)]
    response = api(reader).get("/cases?limit=2")
    assert response.status_code == 200
    body = response.json()
    assert body["total"] == 3 and len(body["data"]) == 2
    assert body["next"].startswith("http://testserver/cases?") and "offset=2" in body["next"]
    item = body["data"][0]
    assert "data" not in item
    assert item["id"] == str(cases[-1].id)  # newest first by default
    assert item["caseNumber"] == "IC-000003" and item["displayName"] and item["currentStep"] is None
    assert item["summary"] == {"amount": 120, "description": "hail damage"}
    last = api(reader).get(body["next"]).json()
    assert [i["id"] for i in last["data"]] == [str(cases[0].id)] and last["next"] is None


def test_list_past_the_exact_count_estimates_total_and_pages_by_the_rows(api, reader, make_case, monkeypatch):
    from shared.api import pagination

    monkeypatch.setattr(pagination, "EXACT_TOTAL_UP_TO", 2)  # a million cases, in miniature
    cases = [make_case() for _ in range(5)]
    client = api(reader)
    body = client.get("/cases?limit=2").json()
    assert body["total"] >= 3  # counted up to the limit, then the database's estimate (never less)
    seen = [i["id"] for i in body["data"]]
    while body["next"]:  # `next` follows the rows, not the estimate: every case once, then no link
        body = client.get(body["next"]).json()
        seen += [i["id"] for i in body["data"]]
    assert seen == [str(c.id) for c in reversed(cases)]
    assert client.get("/cases?limit=2&status=closed").json()["total"] == 0  # under the limit: exact


def test_list_filters_and_sorting(api, admin_user, reader, make_case):
    other_type = case_type_create(
        user=admin_user, key="complaint", display_name="Complaint", schema={"type": "object"}
    )
    first, second = make_case(), make_case()
    third = make_case(of_type=other_type, data={"text": "noisy"})
    api(admin_user).post(f"/cases/{second.id}/close", {}, format="json")
    client = api(reader)

    def ids(query):
        response = client.get(f"/cases?{query}")
        assert response.status_code == 200, response.json()
        return [item["id"] for item in response.json()["data"]]

    assert ids(f"caseTypeId={other_type.id}") == [str(third.id)]
    assert ids("status=closed") == [str(second.id)]
    assert ids("status=active&sortBy=createdAt&order=asc") == [str(first.id), str(third.id)]
    after = first.created_at.isoformat().replace("+00:00", "Z")
    assert str(first.id) in ids(f"createdAfter={after}") and str(first.id) not in ids(
        f"createdBefore={after}"
    )
    # deadline: the complaint sets no SLA, so it gets the 72-hour default, later than the claims' 48
    assert ids("sortBy=deadline&order=asc")[-1] == str(third.id)
    assert ids("sortBy=deadline&order=desc")[0] == str(third.id)
    # a case without a deadline (stored before every case had one) sorts last either way
    Case.objects.filter(pk=third.pk).update(sla_deadline=None)
    assert ids("sortBy=deadline&order=asc")[-1] == str(third.id)
    assert ids("sortBy=deadline&order=desc")[-1] == str(third.id)
    assert ids("sortBy=status&order=asc")[0] != str(second.id) and ids("sortBy=status&order=desc")[-1] != str(
        second.id
    )
    assert ids(f"assignedTo={reader.id}") == []


@pytest.mark.parametrize(
    "query",
    [
        "status=open",
        "sortBy=name",
        "order=up",
        "limit=0",
        "limit=101",
        "offset=-1",
        "createdAfter=yesterday",
        "caseTypeId=abc",
        "assignedTo=abc",
    ],
)
def test_list_bad_parameters_are_400(api, reader, query):
    response = api(reader).get(f"/cases?{query}")
    assert response.status_code == 400 and response.json()["code"] == "validation_error"


def test_list_permissions_and_tenancy(api, outsider, make_user, tenant, make_case):
    make_case()
    assert api(outsider).get("/cases").json()["total"] == 0
    assert api(make_user(tenant, permissions=["tasks:read"])).get("/cases").status_code == 403
    assert api(None).get("/cases").status_code == 401
