"""Django admin: documents per case, read-only, only the administrator's own tenant."""

from __future__ import annotations

from django.test import Client

from casemgmt.accounts.models import User
from casemgmt.vault.models import Document
from tests.casemgmt.conftest import PASSWORD


def browser(user) -> Client:
    client = Client()
    assert client.login(email=user.email, password=PASSWORD)
    return client


def test_admin_lists_documents_per_case_of_its_own_tenant_only(
    admin_user, upload, owner, outsider, make_case, other_tenant
):
    one, two = make_case(), make_case()
    first = upload(owner, b"first", case=one, name="first.txt").json()
    upload(owner, b"second", case=two, name="second.txt")
    foreign = upload(outsider, b"foreign", name="foreign.txt").json()

    client = browser(admin_user)
    listing = client.get("/admin/vault/document/")
    assert listing.status_code == 200
    names = {d.filename for d in listing.context["cl"].queryset}
    assert names == {"first.txt", "second.txt"}

    per_case = client.get("/admin/vault/document/", {"case": str(one.id)})
    assert [d.filename for d in per_case.context["cl"].queryset] == ["first.txt"]
    assert one.case_number.encode() in per_case.content

    detail = client.get(f"/admin/vault/document/{first['id']}/change/")
    assert detail.status_code == 200
    assert b'name="_save"' not in detail.content  # read-only: nothing to save
    assert client.get(f"/admin/vault/document/{foreign['id']}/change/").status_code in (302, 404)
    assert client.post(f"/admin/vault/document/{first['id']}/delete/").status_code == 403
    assert Document.objects.filter(id=first["id"]).exists()

    other_admin = User.objects.get(tenant=other_tenant, roles__name="admin")
    theirs = browser(other_admin).get("/admin/vault/document/")
    assert {d.filename for d in theirs.context["cl"].queryset} == {"foreign.txt"}


def test_admin_shows_erasure_jobs_of_its_own_tenant_read_only(
    api, admin_user, make_user, tenant, other_tenant
):
    subject = make_user(tenant, permissions=["cases:read"])
    accepted = api(admin_user).post(
        "/admin/erasure", {"userId": str(subject.id), "reason": "r"}, format="json"
    )
    client = browser(admin_user)
    listing = client.get("/admin/vault/erasure/")
    assert [str(e.id) for e in listing.context["cl"].queryset] == [accepted.json()["id"]]
    assert b'name="_save"' not in client.get(f"/admin/vault/erasure/{accepted.json()['id']}/change/").content
    other_admin = User.objects.get(tenant=other_tenant, roles__name="admin")
    assert browser(other_admin).get("/admin/vault/erasure/").context["cl"].queryset.count() == 0
