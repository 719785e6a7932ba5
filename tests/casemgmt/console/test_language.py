"""Every console page in English and German, as the signed-in user chose (or the browser asks
before sign-in): translated text, times in the user's zone naming it, no template text on the page.
The admin site follows the same choice; the JSON API stays in English whatever the browser asks."""

from __future__ import annotations

import re
from zoneinfo import ZoneInfo

import pytest
from django.test import Client

from casemgmt.accounts.services import preferences_update
from casemgmt.cases.models import Case
from casemgmt.tenancy.models import DEFAULT_TERMINOLOGY
from tests.casemgmt.console.conftest import signed_in

pytestmark = pytest.mark.django_db

TEMPLATE_TEXT = ("{#", "#}", "{%", "%}", "{{", "}}")


def pages(case: dict) -> list[str]:
    case_id = case["id"]
    return [
        "/console/",
        "/console/cases/new",
        f"/console/cases/new?type={case['caseTypeKey']}",
        "/console/?status=unclaimed&sortBy=dueDate",
        f"/console/tasks/{case_id}/review",
        f"/console/cases/{case_id}",
        "/console/cases",
        "/console/cases?q=window",
        "/console/dashboard",
        "/console/preferences",
        "/console/preferences?saved=1",
    ]


def clean(html: str, where: str) -> str:
    """The page without template syntax (the chart data's JSON block may end in `}}`)."""
    shown = re.sub(r"<script[^>]*>.*?</script>", "", html, flags=re.S)
    for text in TEMPLATE_TEXT:
        assert text not in shown, f"{where} shows template text {text!r}"
    assert ">None<" not in html, f"{where} shows None"
    return html


@pytest.mark.parametrize(
    ("language", "words"),
    [
        ("en", ["Inbox", "Sign out", "Claim", "Active"]),
        ("de", ["Posteingang", "Abmelden", "Übernehmen", "Aktiv"]),
    ],
)
def test_every_page_in_the_users_language(waiting_case, admin_user, language, words):
    preferences_update(user=admin_user, changes={"language": language, "timezone": "Europe/Berlin"})
    client = signed_in(admin_user)
    for url in pages(waiting_case):
        response = client.get(url)
        assert response.status_code == 200, url
        html = clean(response.content.decode(), url)
        assert f'<html lang="{language}"' in html and 'data-time-zone="Europe/Berlin"' in html, url
    inbox = client.get("/console/").content.decode()
    assert all(
        word in inbox or word in client.get(f"/console/cases/{waiting_case['id']}").content.decode()
        for word in words
    )
    verified = client.post(f"/console/cases/{waiting_case['id']}/audit/verify")
    clean(verified.content.decode(), "verify")
    missing = client.get("/console/cases/00000000-0000-0000-0000-000000000000")
    assert missing.status_code == 404
    clean(missing.content.decode(), "404")
    assert ("Nicht verfügbar" in missing.content.decode()) == (language == "de")


def test_times_are_in_the_users_zone_and_name_it(waiting_case, admin_user):
    preferences_update(user=admin_user, changes={"language": "de", "timezone": "America/New_York"})
    created = Case.objects.get(pk=waiting_case["id"]).created_at.astimezone(ZoneInfo("America/New_York"))
    html = signed_in(admin_user).get("/console/cases").content.decode()
    shown = f'{created:%d.%m.%Y %H:%M} <span class="zone">{created.tzname()}</span>'
    assert shown in html  # German date order, New York's clock and zone (EST or EDT)
    assert ">Angelegt</th>" in html  # the console's word, ahead of other apps' catalogues ("Erzeugt")
    assert f'datetime="{Case.objects.get(pk=waiting_case["id"]).created_at.isoformat()}"' in html


def test_the_default_terms_are_translated_but_a_tenants_own_words_are_not(waiting_case, admin_user, api):
    preferences_update(user=admin_user, changes={"language": "de"})
    client = signed_in(admin_user)
    assert ">Fälle</h1>" in client.get("/console/cases").content.decode()
    labels = {**DEFAULT_TERMINOLOGY, "cases": "Claims", "inbox": "Work queue"}
    assert api(admin_user).put("/tenant/terminology", labels, format="json").status_code == 200
    html = client.get("/console/cases").content.decode()
    assert ">Claims</h1>" in html and "Work queue" in html and "Keine" not in html[: html.index("<main")]


def test_before_sign_in_the_browsers_language_applies(db):
    german = Client(HTTP_ACCEPT_LANGUAGE="de-DE,de;q=0.9,en;q=0.5").get("/console/login")
    html = clean(german.content.decode(), "login")
    invited = Client(HTTP_ACCEPT_LANGUAGE="de").get("/console/password/set")
    assert "Passwort" in clean(invited.content.decode(), "password set")
    assert '<html lang="de"' in html and "Anmelden" in html and german["Content-Language"] == "de"
    english = Client(HTTP_ACCEPT_LANGUAGE="fr-FR,fr;q=0.9").get("/console/login").content.decode()
    assert '<html lang="en"' in english and "Sign in" in english


def test_the_admin_follows_the_users_language_and_the_api_stays_english(admin_user, django_user_model):
    operator = django_user_model.objects.create_superuser(
        email="root-de@example.test", password="pw-Secret-123"
    )
    operator.preferences = {"language": "de"}
    operator.save(update_fields=["preferences"])
    client = Client()
    client.force_login(operator, backend="casemgmt.accounts.backends.EmailBackend")
    admin = client.get("/admin/")
    assert admin.status_code == 200
    html = admin.content.decode()
    assert '<html lang="de"' in html and "Abmelden" in html  # Django's own German catalogue
    assert "shared_web/admin.css" in html
    refused = Client(HTTP_ACCEPT_LANGUAGE="de").get("/cases")
    assert refused.status_code == 401 and re.search(
        r"[Aa]uthentication|credentials", refused.content.decode()
    )
