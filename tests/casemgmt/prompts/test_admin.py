"""Django admin: prompt templates; every save registers a version through the services."""

from __future__ import annotations

from casemgmt.audit.models import AuditEvent
from casemgmt.prompts.models import PromptTemplate
from tests.casemgmt.conftest import admin_client


def form(**fields) -> dict[str, str]:
    return {
        "name": "triage",
        "description": "",
        "template": "Case {{ case.caseNumber }}",
        "model": "",
        **fields,
    }


def test_add_then_change_registers_versions_one_and_two(admin_user, tenant):
    client = admin_client(admin_user)
    assert client.post("/admin/prompts/prompttemplate/add/", form()).status_code == 302
    first = PromptTemplate.objects.get(tenant=tenant, name="triage")
    response = client.post(
        f"/admin/prompts/prompttemplate/{first.pk}/change/", form(template="Second {{ case.caseNumber }}")
    )
    assert response.status_code == 302, response.content
    versions = PromptTemplate.objects.filter(tenant=tenant, name="triage").order_by("version")
    assert [(v.version, v.template) for v in versions] == [
        (1, "Case {{ case.caseNumber }}"),
        (2, "Second {{ case.caseNumber }}"),
    ]
    actions = AuditEvent.objects.filter(tenant=tenant, resource="prompt-templates/triage").values_list(
        "action", flat=True
    )
    assert list(actions) == ["prompt_template:created", "prompt_template:versioned"]


def test_a_template_that_does_not_parse_is_a_field_error(admin_user, tenant):
    response = admin_client(admin_user).post("/admin/prompts/prompttemplate/add/", form(template="{{ broken"))
    assert response.status_code == 200
    assert "does not parse" in str(response.context["adminform"].form.errors["template"])
    assert not PromptTemplate.objects.filter(tenant=tenant).exists()


def test_reading_needs_agents_read_and_writing_agents_write(make_user, tenant, admin_user):
    admin_client(admin_user).post("/admin/prompts/prompttemplate/add/", form())
    template = PromptTemplate.objects.get(tenant=tenant)
    reader = admin_client(make_user(tenant, permissions=["agents:read"], is_staff=True))
    assert reader.get(f"/admin/prompts/prompttemplate/{template.pk}/change/").status_code == 200
    assert reader.post("/admin/prompts/prompttemplate/add/", form(name="other")).status_code == 403
    outsider = admin_client(make_user(tenant, permissions=["cases:read"], is_staff=True))
    assert outsider.get("/admin/prompts/prompttemplate/").status_code == 403
