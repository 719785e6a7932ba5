"""Onboarding: the admin invites (or sets an initial password), the welcome email's link opens the
console's set-password page on the public base URL, and the new person lands in the inbox."""

from __future__ import annotations

import pytest
from django.core import mail
from django.test import Client

from casemgmt.accounts.models import Role, User
from casemgmt.accounts.tasks import send_welcome_email
from tests.casemgmt.conftest import admin_client

pytestmark = pytest.mark.django_db

NEW_PASSWORD = "a-long-and-unusual-passphrase-77"


def add_user(admin, tenant, role: str = "case_worker", **extra: str):
    chosen = Role.objects.get(tenant=tenant, name=role)
    body = {
        "email": "Newcomer@Example.test",
        "display_name": "Nora",
        "kind": "human",
        "roles": [str(chosen.pk)],
        "is_active": "on",
        **extra,
    }
    return admin_client(admin).post("/admin/accounts/user/add/", body)


def welcome_link(user: User) -> str:
    send_welcome_email.apply(args=[str(user.id)])
    message = next(m for m in mail.outbox if m.to == [user.email])
    return next(line for line in message.body.splitlines() if "password/set?token=" in line).strip()


def test_the_add_form_offers_an_invitation_or_an_initial_password(admin_user):
    page = admin_client(admin_user).get("/admin/accounts/user/add/").content.decode()
    assert "Invite by email" in page and "Set an initial password now" in page and 'name="password1"' in page
    change = admin_client(admin_user).get(f"/admin/accounts/user/{admin_user.id}/change/").content.decode()
    assert 'name="password1"' not in change  # passwords are never edited on an existing person


def test_an_invited_person_sets_a_password_from_the_link_and_lands_in_the_inbox(admin_user, tenant, settings):
    settings.PUBLIC_BASE_URL = "https://cases.example.test/"
    assert add_user(admin_user, tenant, onboarding="invite").status_code == 302
    user = User.objects.get(email="newcomer@example.test")
    assert not user.has_usable_password()
    link = welcome_link(user)
    assert link.startswith("https://cases.example.test/console/password/set?token=")
    path = link.removeprefix("https://cases.example.test")
    token = path.split("token=", 1)[1]
    visitor = Client()
    form = visitor.get(path)
    assert form.status_code == 200 and form["Content-Type"].startswith("text/html")
    assert f'value="{token}"' in form.content.decode() and "Choose your password" in form.content.decode()
    differ = visitor.post(
        "/console/password/set", {"token": token, "password": NEW_PASSWORD, "confirm": "other"}
    )
    assert differ.status_code == 400 and "The two passwords differ" in differ.content.decode()
    weak = visitor.post("/console/password/set", {"token": token, "password": "short", "confirm": "short"})
    assert weak.status_code == 400 and "too short" in weak.content.decode()
    done = visitor.post(
        "/console/password/set", {"token": token, "password": NEW_PASSWORD, "confirm": NEW_PASSWORD}
    )
    assert done.status_code == 302 and done["Location"] == "/console/"
    inbox = visitor.get("/console/")
    assert inbox.status_code == 200 and "Your password is set. Welcome!" in inbox.content.decode()
    user.refresh_from_db()
    assert user.check_password(NEW_PASSWORD)
    again = Client().post(
        "/console/password/set",
        {"token": token, "password": NEW_PASSWORD + "x", "confirm": NEW_PASSWORD + "x"},
    )
    assert again.status_code == 400 and "invalid or has expired" in again.content.decode()
    assert Client().get("/console/password/set").status_code == 200  # no token: says to use the email's link


def test_an_initial_password_is_checked_and_the_email_then_only_welcomes(admin_user, tenant):
    differ = add_user(admin_user, tenant, onboarding="password", password1=NEW_PASSWORD, password2="nope")
    assert differ.status_code == 200 and "The two passwords differ." in differ.content.decode()
    weak = add_user(admin_user, tenant, onboarding="password", password1="password", password2="password")
    assert weak.status_code == 200 and not User.objects.filter(email="newcomer@example.test").exists()
    added = add_user(
        admin_user, tenant, onboarding="password", password1=NEW_PASSWORD, password2=NEW_PASSWORD
    )
    assert added.status_code == 302
    user = User.objects.get(email="newcomer@example.test")
    assert user.check_password(NEW_PASSWORD)
    send_welcome_email.apply(args=[str(user.id)])
    body = next(m for m in mail.outbox if m.to == [user.email]).body
    assert "password/set" not in body and "You log in with newcomer@example.test" in body
    client = Client()
    assert client.post("/console/login", {"email": user.email, "password": NEW_PASSWORD}).status_code == 302
    assert client.get("/console/").status_code == 200


def test_a_viewer_lands_on_the_case_list(admin_user, tenant):
    assert add_user(admin_user, tenant, role="viewer").status_code == 302
    user = User.objects.get(email="newcomer@example.test")
    token = welcome_link(user).split("token=", 1)[1]
    body = {"token": token, "password": NEW_PASSWORD, "confirm": NEW_PASSWORD}
    done = Client().post("/console/password/set", body)
    assert done.status_code == 302 and done["Location"] == "/console/cases"
