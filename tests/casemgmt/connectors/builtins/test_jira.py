"""Jira Cloud REST v3 connector against a local server speaking the v3 API."""

from __future__ import annotations

import base64
import json

import pytest

from casemgmt.connectors.base import ConnectorError
from tests.casemgmt.connectors.builtins.conftest import JIRA_EMAIL, JIRA_TOKEN

pytestmark = pytest.mark.django_db
AUTH = "Basic " + base64.b64encode(f"{JIRA_EMAIL}:{JIRA_TOKEN}".encode()).decode()


def config(server):
    return {"baseUrl": server.base_url, "email": JIRA_EMAIL, "apiToken": JIRA_TOKEN}


@pytest.fixture
def issue(invoke, jira_server):
    result, _ = invoke("jira", "create_issue", {"project": "OPS", "summary": "Seed"}, config(jira_server))
    jira_server.requests.clear()
    return result.step_result()["key"]


def test_create_issue_sends_fields_with_an_adf_description(invoke, jira_server):
    result, context = invoke(
        "jira", "create_issue",
        {"project": "OPS", "summary": "Refund ACME-000004", "issueType": "Bug",
         "description": "Amount: 1200\nApplicant: Ada\n\nSee the case.", "labels": ["refund"]},
        config(jira_server),
    )  # fmt: skip
    [request] = jira_server.requests
    assert (request.method, request.path) == ("POST", "/rest/api/3/issue")
    assert request.headers["authorization"] == AUTH
    assert request.headers["accept"] == "application/json"
    assert request.json == {
        "fields": {
            "project": {"key": "OPS"},
            "summary": "Refund ACME-000004",
            "issuetype": {"name": "Bug"},
            "description": {
                "type": "doc",
                "version": 1,
                "content": [
                    {
                        "type": "paragraph",
                        "content": [
                            {"type": "text", "text": "Amount: 1200"},
                            {"type": "hardBreak"},
                            {"type": "text", "text": "Applicant: Ada"},
                        ],
                    },
                    {"type": "paragraph", "content": [{"type": "text", "text": "See the case."}]},
                ],
            },
            "labels": ["refund"],
        }
    }
    assert result.status_code == 201
    assert result.step_result() == {
        "id": "10001",
        "key": "OPS-1",
        "self": f"{jira_server.base_url}/rest/api/3/issue/10001",
    }
    assert JIRA_TOKEN not in json.dumps(context.exchanges)
    assert all(exchange["headers"]["Authorization"] == "***" for exchange in context.exchanges)


def test_update_issue_puts_the_changed_fields(invoke, jira_server, issue):
    result, _ = invoke(
        "jira", "update_issue", {"issueKey": issue, "summary": "Renamed", "fields": {"customfield_10010": 3}},
        config(jira_server),
    )  # fmt: skip
    [request] = jira_server.requests
    assert (request.method, request.path) == ("PUT", f"/rest/api/3/issue/{issue}")
    assert request.json == {"fields": {"customfield_10010": 3, "summary": "Renamed"}}
    assert result.status_code == 204 and result.step_result() == {"key": issue, "updated": True}
    assert jira_server.issues[issue]["fields"]["summary"] == "Renamed"


def test_add_comment_posts_an_adf_body(invoke, jira_server, issue):
    result, _ = invoke(
        "jira", "add_comment", {"issueKey": issue, "body": "Approved by Ada"}, config(jira_server)
    )
    [request] = jira_server.requests
    assert (request.method, request.path) == ("POST", f"/rest/api/3/issue/{issue}/comment")
    assert request.json == {
        "body": {
            "type": "doc", "version": 1,
            "content": [{"type": "paragraph", "content": [{"type": "text", "text": "Approved by Ada"}]}],
        }
    }  # fmt: skip
    assert result.status_code == 201 and result.step_result()["id"] == "10001"


def test_transition_by_name_looks_up_its_id(invoke, jira_server, issue):
    result, _ = invoke(
        "jira", "transition_issue", {"issueKey": issue, "transition": "done"}, config(jira_server)
    )
    listed, applied = jira_server.requests
    assert (listed.method, listed.path) == ("GET", f"/rest/api/3/issue/{issue}/transitions")
    assert (applied.method, applied.path) == ("POST", f"/rest/api/3/issue/{issue}/transitions")
    assert applied.json == {"transition": {"id": "31"}}
    assert jira_server.issues[issue]["status"] == "Done"
    assert result.step_result() == {"key": issue, "transitionId": "31"}


def test_transition_by_id_is_applied_directly(invoke, jira_server, issue):
    invoke("jira", "transition_issue", {"issueKey": issue, "transition": "21"}, config(jira_server))
    [applied] = jira_server.requests
    assert applied.json == {"transition": {"id": "21"}}


def test_unknown_transition_name_is_an_input_error(invoke, jira_server, issue):
    with pytest.raises(ConnectorError) as failure:
        invoke("jira", "transition_issue", {"issueKey": issue, "transition": "Archive"}, config(jira_server))
    assert failure.value.code == "invalid_input" and "To Do, In Progress, Done" in failure.value.message


def test_field_errors_are_permanent_with_jira_reasons(invoke, jira_server):
    with pytest.raises(ConnectorError) as failure:
        invoke("jira", "create_issue", {"project": "NOPE", "summary": "x"}, config(jira_server))
    error = failure.value
    assert error.status_code == 400 and not error.transient
    assert "project: Specify a valid project ID or key" in error.message


def test_unknown_issue_and_bad_credentials_are_permanent(invoke, jira_server):
    with pytest.raises(ConnectorError) as missing:
        invoke("jira", "add_comment", {"issueKey": "OPS-999", "body": "x"}, config(jira_server))
    assert missing.value.status_code == 404 and "does not exist" in missing.value.message
    with pytest.raises(ConnectorError) as denied:
        invoke(
            "jira",
            "add_comment",
            {"issueKey": "OPS-1", "body": "x"},
            {**config(jira_server), "apiToken": "wrong"},
        )
    assert denied.value.status_code == 401 and not denied.value.transient


def test_rate_limit_and_outage_are_transient(invoke, jira_server):
    jira_server.fail_next(429, {"errorMessages": ["Rate limit exceeded."]}, {"Retry-After": "5"})
    with pytest.raises(ConnectorError) as limited:
        invoke("jira", "create_issue", {"project": "OPS", "summary": "x"}, config(jira_server))
    assert limited.value.transient and "Rate limit exceeded." in limited.value.message
    jira_server.fail_next(502, "Bad Gateway")
    with pytest.raises(ConnectorError) as outage:
        invoke("jira", "create_issue", {"project": "OPS", "summary": "x"}, config(jira_server))
    assert outage.value.transient
