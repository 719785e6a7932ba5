"""Django admin: the tenant's audit trail, read-only, with chain verification."""

from __future__ import annotations

from django.db import connection
from django.utils import translation
from django.utils.translation import ngettext

from casemgmt.audit.models import AuditEvent
from casemgmt.audit.services import record
from tests.casemgmt.conftest import admin_client


def messages_of(response) -> list[tuple[str, str]]:
    return [(m.level_tag, str(m)) for m in response.context["messages"]]


def test_the_trail_is_the_tenants_own_and_read_only(admin_user, tenant, other_tenant):
    client = admin_client(admin_user)
    listing = client.get("/admin/audit/auditevent/")
    events = list(listing.context["cl"].queryset)
    assert events and {e.tenant_id for e in events} == {tenant.id}
    assert AuditEvent.objects.filter(tenant=other_tenant).exists()
    page = client.get(f"/admin/audit/auditevent/{events[0].pk}/change/")
    assert page.status_code == 200 and b'name="_save"' not in page.content
    assert client.post(f"/admin/audit/auditevent/{events[0].pk}/delete/", {"post": "yes"}).status_code == 403


def test_verify_reports_a_valid_chain_and_records_the_verification(admin_user, tenant):
    client = admin_client(admin_user)
    assert b"Verify the audit chain" in client.get("/admin/audit/auditevent/").content
    response = client.post("/admin/audit/auditevent/verify/", follow=True)
    [(level, text)] = messages_of(response)
    assert level == "success" and text.startswith("The audit chain: valid")
    verified = AuditEvent.objects.filter(tenant=tenant, action="audit:verified").get()
    assert verified.changes["isValid"] is True and verified.actor == str(admin_user.id)


def test_verify_names_a_tampered_event(admin_user, tenant):
    target = AuditEvent.objects.filter(tenant=tenant).order_by("sequence").first()
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL session_replication_role = replica")  # as an attacker with SQL would
        cursor.execute("UPDATE audit_auditevent SET action = 'forged' WHERE id = %s", [target.id])
        cursor.execute("SET LOCAL session_replication_role = origin")
    response = admin_client(admin_user).post("/admin/audit/auditevent/verify/", follow=True)
    [(level, text)] = messages_of(response)
    assert level == "error" and "INVALID" in text and str(target.id) in text


def test_verify_selected_events_checks_them_in_the_chain(admin_user, tenant):
    for n in range(3):
        record(tenant_id=tenant.id, actor="test", action="test:appended", resource=f"things/{n}", changes={})
    events = AuditEvent.objects.filter(tenant=tenant).order_by("sequence")[1:3]
    response = admin_client(admin_user).post(
        "/admin/audit/auditevent/",
        {"action": "verify_selected", "_selected_action": [str(e.pk) for e in events]},
        follow=True,
    )
    [(level, text)] = messages_of(response)
    assert level == "success" and "2 entries checked" in text


def test_verify_needs_admin_audit_and_a_post(make_user, tenant, admin_user):
    reader = admin_client(make_user(tenant, permissions=["audit:read"], is_staff=True))
    assert reader.get("/admin/audit/auditevent/").status_code == 403
    assert reader.post("/admin/audit/auditevent/verify/").status_code == 403
    assert admin_client(admin_user).get("/admin/audit/auditevent/verify/").status_code == 405
    assert not AuditEvent.objects.filter(tenant=tenant, action="audit:verified").exists()


def test_the_trail_names_people_and_keeps_other_actors_as_recorded(admin_user, tenant, other_tenant):
    from casemgmt.accounts.models import User

    stranger = User.objects.get(tenant=other_tenant, roles__name="admin")
    record(tenant_id=tenant.id, actor="robot", action="connector:tested", resource="connectors/http")
    record(tenant_id=tenant.id, actor=str(admin_user.id), action="case:viewed", resource="cases/y")
    # An id of another tenant's principal is not that person here: it stays an id.
    record(tenant_id=tenant.id, actor=str(stranger.id), action="case:viewed", resource="cases/x")
    page = admin_client(admin_user).get("/admin/audit/auditevent/").content.decode()
    name = admin_user.display_name or admin_user.email
    assert f"{name} ({admin_user.id})" in page
    assert ">robot<" in page
    assert f">{stranger.id}<" in page and f"({stranger.id})" not in page


def test_one_checked_entry_is_singular_in_english_and_german(admin_user, tenant):
    event = AuditEvent.objects.filter(tenant=tenant).order_by("sequence").last()
    client = admin_client(admin_user)
    form = {"action": "verify_selected", "_selected_action": [str(event.pk)]}
    [(_, english)] = messages_of(client.post("/admin/audit/auditevent/", form, follow=True))
    assert "(1 entry checked)" in english
    with translation.override("de"):
        assert ngettext("%(count)s entry checked", "%(count)s entries checked", 1) % {"count": 1} == (
            "1 Eintrag geprüft"
        )
        assert ngettext("%(count)s entry checked", "%(count)s entries checked", 3) % {"count": 3} == (
            "3 Einträge geprüft"
        )
