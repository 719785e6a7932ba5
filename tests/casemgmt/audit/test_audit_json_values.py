"""Audit events verify whatever JSON values they record: PostgreSQL's jsonb rewrites numbers (no
negative zero, no exponents), so what is hashed, stored and returned must be one canonical form."""

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from casemgmt.audit import selectors as audit_selectors
from casemgmt.audit import services as audit_services
from casemgmt.cases.models import Case
from casemgmt.cases.services import case_update_data

pytestmark = pytest.mark.django_db


def as_text(value):
    """Distinguishes what == does not: -0.0 from 0.0, 1 from 1.0."""
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


def both_verifications_pass(case):
    events = audit_selectors.case_events(tenant_id=case.tenant_id, case_id=case.id)
    per_case = audit_services.verify_events_in_chain(tenant_id=case.tenant_id, events=events)
    chain = audit_services.verify_tenant_chain(tenant_id=case.tenant_id)
    assert per_case.errors == [] and per_case.is_valid
    assert chain.errors == [] and chain.is_valid


@pytest.mark.parametrize("literal", ["-0.0", "1.7976931348623157e308", "123456789012345678901234567890.5"])
def test_numbers_jsonb_rewrites_keep_the_trail_valid(api, admin_user, make_case, literal):
    case = make_case()
    client = api(admin_user)
    body = f'{{"data": {{"y": {literal}}}, "version": 1}}'
    patched = client.patch(f"/cases/{case.id}/data", data=body, content_type="application/json")
    assert patched.status_code == 200, patched.content

    verify = client.post(f"/cases/{case.id}/events/verify").json()
    assert verify["isValid"] is True, verify["errors"]
    chain = client.get("/audit/verify-chain").json()
    assert chain["status"] == "valid", chain["errors"]

    # One form everywhere: the PATCH answer, a later read and the hashed audit change agree exactly.
    returned = patched.json()["data"]["y"]
    assert as_text(client.get(f"/cases/{case.id}").json()["data"]["y"]) == as_text(returned)
    events = client.get(f"/cases/{case.id}/events").json()["data"]
    (update,) = [e for e in events if e["action"] == "case:updated"]
    assert as_text(update["changes"]["after"]["y"]) == as_text(returned)
    assert float(returned) == float(literal)


def test_a_patch_to_minus_zero_over_zero_is_no_change(api, admin_user, make_case):
    case = make_case(data={"applicant": {"name": "Ada"}, "amount": 0.0})
    response = api(admin_user).patch(
        f"/cases/{case.id}/data", data='{"data": {"amount": -0.0}}', content_type="application/json"
    )
    assert response.status_code == 200 and response.json()["version"] == 1


KEYS = st.text(st.characters(exclude_categories=("Cs",), exclude_characters="\x00"), max_size=8)
LEAVES = (
    st.none()
    | st.booleans()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.sampled_from([-0.0, 1.7976931348623157e308, 5e-324, 1e16, -1e22, 2.2250738585072014e-308])
    | st.integers()
    | st.integers(min_value=-(10**80), max_value=10**80)
    | st.text(st.characters(exclude_categories=("Cs",), exclude_characters="\x00"), max_size=12)
    | st.sampled_from(["😀", "𝄞 clef", "\U0010ffff", "Zoë", "\u200b"])
)
JSON_VALUES = st.recursive(
    LEAVES,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(KEYS, children, max_size=4),
    max_leaves=12,
)


@pytest.fixture
def open_case(make_case):
    return make_case()


@settings(
    max_examples=60,
    deadline=None,
    # One case and one transaction for all examples: each example appends to the same chain.
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(value=JSON_VALUES)
def test_every_appended_event_verifies(admin_user, open_case, value):
    case = case_update_data(user=admin_user, case=open_case, patch={"v": value}, expected_version=None)
    stored = Case.objects.get(pk=case.pk)
    assert as_text(stored.data) == as_text(case.data)  # the value returned is the value stored

    # Values merge-patch would reshape (nulls inside objects, bare arrays) go straight to the trail.
    recorded = audit_services.record(
        tenant_id=case.tenant_id,
        actor=str(admin_user.id),
        action="case:noted",
        resource=f"cases/{case.id}/notes",
        changes={"value": value},
    )
    stored_event = type(recorded).objects.get(pk=recorded.pk)
    assert as_text(stored_event.changes) == as_text(recorded.changes)
    both_verifications_pass(case)
