"""The orchestrator console in English and German: the language comes from the user's preferences
(kept in the session) or, until they choose, the browser; every page renders without template
text, and the JSON API stays in English."""

from __future__ import annotations

import re

import pytest
from django.test import Client

from orchestrator.runs.planning import ScheduleOptions
from orchestrator.runs.services import run_schedule_dag
from tests.orchestrator.console.conftest import signed_in
from tests.orchestrator.console.test_pages import read_pages

pytestmark = pytest.mark.django_db

TEMPLATE_TEXT = ("{#", "#}", "{%", "%}", "{{ ", " }}")


def clean(html: str, where: str) -> str:
    shown = re.sub(r"<script[^>]*>.*?</script>", "", html, flags=re.S)
    for text in TEMPLATE_TEXT:
        assert text not in shown, f"{where} shows template text {text!r}"
    assert ">None<" not in shown, f"{where} shows None"
    return html


def choose(client, language: str) -> None:
    body = {"timezone": "Europe/Berlin", "theme": "system", "language": language}
    assert client.post("/console/preferences", body).status_code == 302


def test_the_preference_sets_the_language_of_every_page(users, etl):
    run, _ = run_schedule_dag(dag_id=etl, options=ScheduleOptions(run_id="etl-lang-1"))
    client = signed_in(users["viewer"])
    for url in read_pages(run.run_id):
        clean(client.get(url).content.decode(), url)
    choose(client, "de")
    for url in read_pages(run.run_id):
        response = client.get(url)
        assert response.status_code == 200, url
        html = clean(response.content.decode(), url)
        if "<html" in html:  # the live fragment is part of a page
            assert '<html lang="de"' in html and "Läufe</a>" in html and "Abmelden" in html, url
    choose(client, "en")
    assert "Runs</a>" in client.get("/console/").content.decode()


def test_before_sign_in_the_browsers_language_applies_and_the_api_stays_english(db):
    page = Client(HTTP_ACCEPT_LANGUAGE="de").get("/console/login")
    assert '<html lang="de"' in clean(page.content.decode(), "login") and page["Content-Language"] == "de"
    refused = Client(HTTP_ACCEPT_LANGUAGE="de").get("/api/runs?limit=abc")
    assert refused.status_code == 400 and refused.json()["message"] == "limit must be an integer"
    assert "Content-Language" not in refused  # the locale middleware leaves the API alone
