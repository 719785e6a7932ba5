"""A lone surrogate escape ("\\ud800" not followed by a low surrogate) is not Unicode text: anywhere
in a JSON body it is a 400 validation error, never a 500 from the database or the audit hash."""

import json

import pytest

from casemgmt.audit.models import AuditEvent
from casemgmt.cases.models import Case

pytestmark = pytest.mark.django_db

LONE = r'"x\ud800y"'  # the JSON escape itself, as a client sends it
LOW_ONLY = r'"x\udc00y"'


def assert_validation_error(response):
    assert response.status_code == 400, response.content
    body = response.json()
    assert body["error"] is True and body["code"] == "validation_error"
    assert "surrogate" in body["message"] and isinstance(body["details"], dict)


@pytest.mark.parametrize("string", [LONE, LOW_ONLY])
@pytest.mark.parametrize("where", ["value", "key", "nested"])
def test_case_create_refuses_a_lone_surrogate(api, admin_user, case_type, string, where):
    data = {
        "value": f'{{"applicant": {{"name": {string}}}, "amount": 1}}',
        "key": f'{{"applicant": {{"name": "Ada"}}, "amount": 1, {string}: 1}}',
        "nested": f'{{"applicant": {{"name": "Ada"}}, "amount": 1, "tags": ["a", [{string}]]}}',
    }[where]
    body = f'{{"caseTypeId": "{case_type.id}", "data": {data}}}'
    assert_validation_error(api(admin_user).post("/cases", data=body, content_type="application/json"))
    assert not Case.objects.filter(case_type=case_type).exists()


def test_case_data_patch_refuses_a_lone_surrogate(api, admin_user, make_case):
    case = make_case()
    events = AuditEvent.objects.filter(chain=str(case.tenant_id)).count()
    body = f'{{"data": {{"description": {LONE}}}, "version": 1}}'
    response = api(admin_user).patch(f"/cases/{case.id}/data", data=body, content_type="application/json")
    assert_validation_error(response)
    case.refresh_from_db()
    assert case.version == 1 and case.data["description"] == "hail damage"
    assert AuditEvent.objects.filter(chain=str(case.tenant_id)).count() == events


def test_a_surrogate_pair_is_one_astral_character_and_is_kept(api, admin_user, make_case):
    case = make_case()
    body = r'{"data": {"description": "clef \ud834\udd1e"}, "version": 1}'
    response = api(admin_user).patch(f"/cases/{case.id}/data", data=body, content_type="application/json")
    assert response.status_code == 200, response.content
    assert response.json()["data"]["description"] == "clef \U0001d11e"
    verify = api(admin_user).post(f"/cases/{case.id}/events/verify").json()
    assert verify["isValid"] is True


def test_numbers_beyond_a_float_are_a_400(api, admin_user, make_case):
    case = make_case()
    body = '{"data": {"amount": 1e400}, "version": 1}'
    response = api(admin_user).patch(f"/cases/{case.id}/data", data=body, content_type="application/json")
    assert response.status_code == 400 and response.json()["code"] == "validation_error"
    assert json.loads(response.content)["message"].startswith("Malformed request body")
