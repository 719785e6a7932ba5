"""Django admin: case types (a save registers the next version) and read-only cases, per tenant."""

from __future__ import annotations

import json

from casemgmt.audit.models import AuditEvent
from casemgmt.cases.models import Case, CaseType
from casemgmt.cases.services import default_prefix
from tests.casemgmt.conftest import admin_client

SCHEMA = {"type": "object", "properties": {"amount": {"type": "number"}}}


def change_form(case_type: CaseType, **overrides) -> dict[str, str]:
    form = {
        "display_name": case_type.display_name,
        "description": case_type.description,
        "schema": json.dumps(case_type.schema),
        "sla_hours": "",
    }
    return {**form, **overrides}


def test_saving_a_case_type_registers_the_next_version_and_keeps_the_first(admin_user, case_type):
    client = admin_client(admin_user)
    url = f"/admin/cases/casetype/{case_type.pk}/change/"
    assert client.get(url).status_code == 200
    response = client.post(url, change_form(case_type, display_name="Claim, second edition"))
    assert response.status_code == 302, response.content
    versions = CaseType.objects.filter(tenant=case_type.tenant, key=case_type.key).order_by("version")
    assert [(v.version, v.display_name) for v in versions] == [
        (1, case_type.display_name),
        (2, "Claim, second edition"),
    ]
    assert versions[1].prefix == case_type.prefix
    registered = AuditEvent.objects.filter(tenant=case_type.tenant, action="case_type:registered")
    assert registered.filter(changes__version=2, actor=str(admin_user.id)).exists()


def test_adding_a_case_type_goes_through_the_service(admin_user, tenant):
    response = admin_client(admin_user).post(
        "/admin/cases/casetype/add/",
        {
            "key": "permit",
            "display_name": "Permit",
            "description": "",
            "schema": json.dumps(SCHEMA),
            "prefix": "",
        },
    )
    assert response.status_code == 302, response.content
    created = CaseType.objects.get(tenant=tenant, key="permit")
    assert (created.version, created.prefix, created.created_by_id) == (
        1,
        default_prefix("permit"),
        admin_user.id,
    )


def test_an_invalid_schema_is_shown_on_the_form_and_nothing_is_registered(admin_user, case_type):
    client = admin_client(admin_user)
    bad = {"type": "object", "properties": {"x": {"type": "no-such-type"}}}
    response = client.post(
        f"/admin/cases/casetype/{case_type.pk}/change/", change_form(case_type, schema=json.dumps(bad))
    )
    assert response.status_code == 200
    assert response.context["adminform"].form.errors["schema"]
    assert CaseType.objects.filter(key=case_type.key).count() == 1


def test_a_reader_sees_case_types_but_cannot_register_one(make_user, tenant, case_type):
    reader = make_user(tenant, permissions=["cases:read"], is_staff=True)
    client = admin_client(reader)
    page = client.get(f"/admin/cases/casetype/{case_type.pk}/change/")
    assert page.status_code == 200 and b'name="_save"' not in page.content
    assert (
        client.post(f"/admin/cases/casetype/{case_type.pk}/change/", change_form(case_type)).status_code
        == 403
    )
    assert client.get("/admin/cases/casetype/add/").status_code == 403
    assert CaseType.objects.filter(key=case_type.key).count() == 1


def test_cases_are_read_only(admin_user, make_case):
    case = make_case()
    client = admin_client(admin_user)
    listing = client.get("/admin/cases/case/")
    assert [c.pk for c in listing.context["cl"].queryset] == [case.pk]
    page = client.get(f"/admin/cases/case/{case.pk}/change/")
    assert page.status_code == 200 and b'name="_save"' not in page.content
    assert client.post(f"/admin/cases/case/{case.pk}/change/", {"status": "closed"}).status_code == 403
    assert client.post(f"/admin/cases/case/{case.pk}/delete/", {"post": "yes"}).status_code == 403
    assert Case.objects.get(pk=case.pk).status == Case.ACTIVE


def test_the_schema_editor_pretty_prints_and_names_a_syntax_errors_line(admin_user, case_type):
    client = admin_client(admin_user)
    url = f"/admin/cases/casetype/{case_type.pk}/change/"
    page = client.get(url).content.decode()
    assert 'class="json-editor"' in page and "{\n  &quot;type&quot;: &quot;object&quot;" in page
    typed = '{\n  "type": "object",\n  "properties": {,}\n}'
    response = client.post(url, change_form(case_type, schema=typed))
    assert response.status_code == 200
    [error] = response.context["adminform"].form.errors["schema"]
    assert error.startswith("Not valid JSON at line 3, column 18: Expecting property name")
    assert "&quot;properties&quot;: {,}" in response.content.decode()  # kept as typed
    assert CaseType.objects.filter(key=case_type.key).count() == 1


def test_a_schema_rule_violation_names_where_it_is(admin_user, case_type):
    bad = {"type": "object", "properties": {"code": {"type": "string", "pattern": "("}}}
    response = admin_client(admin_user).post(
        f"/admin/cases/casetype/{case_type.pk}/change/", change_form(case_type, schema=json.dumps(bad))
    )
    [error] = response.context["adminform"].form.errors["schema"]
    assert error.startswith("schema.properties.code.pattern")
    assert CaseType.objects.filter(key=case_type.key).count() == 1


def test_another_tenants_admin_cannot_reach_a_case_type(make_user, other_tenant, case_type):
    stranger = admin_client(make_user(other_tenant, roles=["admin"], is_staff=True))
    url = f"/admin/cases/casetype/{case_type.pk}/change/"
    assert stranger.get(url).status_code in (302, 404)
    assert stranger.post(url, change_form(case_type, display_name="Stolen")).status_code in (302, 403, 404)
    assert CaseType.objects.filter(key=case_type.key).count() == 1
