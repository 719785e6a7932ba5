"""Case search on SQLite, as `make run` does it: without PostgreSQL's full-text index, every word
must occur in the case's text (numbers, names, data values), in any letter case, within the tenant."""

from __future__ import annotations

import pytest

# --- search fallback --------------------------------------------------------------------------


@pytest.fixture
def claims(make_case):
    flood = make_case(
        data={
            "applicant": {"name": "Grace Hopper"},
            "amount": 1,
            "description": "Basement flooded after storm",
        }
    )
    fire = make_case(
        data={"applicant": {"name": "Zoë Ærø"}, "amount": 2, "description": "Kitchen fire, smoke damage"}
    )
    both = make_case(
        data={
            "applicant": {"name": "Flood Fire"},
            "amount": 3,
            "description": "flooding and fires",
            "tags": ["flood"],
        }
    )
    return flood, fire, both


def search(client, query, **params):
    response = client.get("/cases/search", {"q": query, **params})
    assert response.status_code == 200, response.json()
    return response.json()


def ids(body):
    return [hit["id"] for hit in body["data"]]


@pytest.mark.django_db
def test_search_finds_words_in_the_data_ranked_by_occurrences(api, reader, claims):
    flood, _, both = claims
    body = search(api(reader), "flood")
    assert body["total"] == 2 and body["next"] is None
    assert ids(body) == [str(both.id), str(flood.id)]  # three occurrences before one
    assert body["data"][0]["relevance"] > body["data"][1]["relevance"] > 0
    for hit in body["data"]:
        assert set(hit) == {"id", "caseNumber", "displayName", "caseTypeId", "relevance", "excerpt"}
    assert "**flood**ed" in body["data"][1]["excerpt"].lower()


@pytest.mark.django_db
def test_search_needs_every_word_in_any_case_and_covers_names_and_numbers(api, reader, claims):
    flood, fire, both = claims
    client = api(reader)
    assert ids(search(client, "BASEMENT Storm")) == [str(flood.id)]
    assert ids(search(client, "basement fire")) == []
    assert ids(search(client, "hopper")) == [str(flood.id)]  # nested value
    assert ids(search(client, fire.case_number)) == [str(fire.id)]
    assert ids(search(client, '"kitchen fire"')) == [str(fire.id)]  # quotes do not break the words
    assert search(client, "volcano") == {"data": [], "total": 0, "next": None}
    assert search(client, '""') == {"data": [], "total": 0, "next": None}


@pytest.mark.django_db
def test_search_folds_case_beyond_ascii(api, reader, claims):
    _, fire, _ = claims
    client = api(reader)
    for query in ("zoë", "ZOË", "ærø", "ÆRØ"):
        assert ids(search(client, query)) == [str(fire.id)], query


@pytest.mark.django_db
def test_search_follows_data_changes_and_pages(api, admin_user, reader, claims):
    flood = claims[0]
    api(admin_user).patch(f"/cases/{flood.id}/data", {"data": {"description": "earthquake"}}, format="json")
    client = api(reader)
    assert ids(search(client, "earthquake")) == [str(flood.id)]
    assert ids(search(client, "basement")) == []
    first = search(client, "fire", limit=1)
    assert first["total"] == 2 and len(first["data"]) == 1 and "offset=1" in first["next"]
    second = client.get(first["next"]).json()
    assert second["total"] == 2 and ids(second) != ids(first) and second["next"] is None


@pytest.mark.django_db
def test_search_stays_inside_the_tenant(api, reader, outsider, make_user, other_tenant, claims):
    assert search(api(outsider), "flood")["total"] == 0
    own = make_user(other_tenant, permissions=["*"])
    mine = api(own).post(
        "/case-types",
        {"key": "flood_report", "displayName": "F", "schema": {"type": "object"}},
        format="json",
    )
    assert mine.status_code == 201, mine.content
    created = api(own).post(
        "/cases", {"caseTypeId": mine.json()["id"], "data": {"note": "flood"}}, format="json"
    )
    assert created.status_code == 201, created.content
    assert ids(search(api(outsider), "flood")) == [created.json()["id"]]
    assert created.json()["id"] not in ids(search(api(reader), "flood"))
