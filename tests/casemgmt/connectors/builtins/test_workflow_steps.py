"""Protocol connectors as workflow `connector` steps, run by a real Celery worker after commit:
a Slack message, then a Jira issue quoting the Slack step's result, then a PDF letter saved to the
case's documents; and a permanent Slack error skipping its step when `onFailure` is `skip`."""

from __future__ import annotations

import io
import uuid

import pytest
from pypdf import PdfReader

from casemgmt.accounts.models import User
from casemgmt.audit.models import AuditEvent
from casemgmt.cases.models import Case
from casemgmt.prompts.services import prompt_template_create
from casemgmt.vault.models import Document
from casemgmt.vault.storage import vault_storage
from casemgmt.workflows.models import CaseStep
from tests.casemgmt.connectors.builtins.conftest import JIRA_EMAIL, JIRA_TOKEN, SLACK_TOKEN
from tests.support.processes import start_celery_worker, wait_for

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]
LETTER = "<h1 style='color:#1f4e79'>Decision {{case_number}}</h1><p>Amount: {{case_data.amount}}</p>"


@pytest.fixture(scope="module")
def connector_queue() -> str:
    return f"case.connectors-{uuid.uuid4().hex[:8]}"


@pytest.fixture(scope="module")
def connector_worker(subprocess_env, connector_queue):
    """A worker of its own on a queue of its own, allowed to reach the local protocol servers."""
    env = {
        **subprocess_env,
        "CASE_CONNECTOR_QUEUE": connector_queue,
        "CASE_CONNECTOR_ALLOWED_HOSTS": "127.0.0.1",
    }
    worker = start_celery_worker(
        name="case-connector-worker", app="casemgmt.config", queues=[connector_queue], env=env, concurrency=1
    )
    try:
        yield worker
    finally:
        worker.stop()


@pytest.fixture
def flow_api(api, tenant, settings, connector_queue, connector_worker):
    settings.CONNECTOR_QUEUE = connector_queue
    settings.CONNECTOR_ALLOWED_HOSTS = ["127.0.0.1"]
    admin = User.objects.get(tenant=tenant, roles__name="admin")
    return admin, api(admin)


def ok(response, status=200):
    assert response.status_code == status, response.content
    return response.json()


def start_case(client, steps, data):
    key = f"claim_{uuid.uuid4().hex[:6]}"
    schema = {"type": "object", "properties": {"amount": {"type": "number"}}}
    ok(client.post("/case-types", {"key": key, "displayName": "Claim", "schema": schema}, format="json"), 201)
    draft = ok(
        client.post("/workflows", {"caseTypeKey": key, "name": "Notify", "steps": steps}, format="json"), 201
    )
    ok(client.post(f"/workflows/{draft['id']}/publish"))
    return ok(client.post("/cases", {"case_type_key": key, "case_data": data}, format="json"), 201)


def steps_of(case_id):
    return {s.step_id: s for s in CaseStep.objects.filter(case_id=case_id)}


def settled(case_id, *step_ids):
    def check():
        steps = steps_of(case_id)
        done = all(
            steps[s].status in (CaseStep.COMPLETED, CaseStep.SKIPPED, CaseStep.FAILED) for s in step_ids
        )
        return steps if done else None

    return check


def test_slack_then_jira_then_pdf_steps(flow_api, slack_server, jira_server, connector_worker):
    admin, client = flow_api
    ok(
        client.put(
            "/connectors/slack/config",
            {"config": {"token": SLACK_TOKEN, "apiUrl": slack_server.api_url}},
            format="json",
        )
    )
    jira_config = {"baseUrl": jira_server.base_url, "email": JIRA_EMAIL, "apiToken": JIRA_TOKEN}
    ok(client.put("/connectors/jira/config", {"config": jira_config}, format="json"))
    prompt_template_create(user=admin, name="decision_letter", template=LETTER)
    steps = [
        {"id": "notify", "name": "Notify", "type": "connector", "connector": "slack", "action": "send_message",
         "config": {"channel": "C0PUBLIC01", "text": "New claim {{case_number}} of {{case_data.amount}}"}},
        {"id": "ticket", "name": "Ticket", "type": "connector", "connector": "jira", "action": "create_issue",
         "config": {"project": "OPS", "summary": "Review {{case_number}}",
                    "description": "Slack message {{step_results.notify.ts}}"}},
        {"id": "letter", "name": "Letter", "type": "connector", "connector": "pdf", "action": "generate_pdf",
         "config": {"template": "decision_letter", "filename": "{{case_number}}-decision"}},
    ]  # fmt: skip
    case = start_case(client, steps, {"amount": 1200})
    found = wait_for(
        settled(case["id"], "notify", "ticket", "letter"), timeout=60, what="the connector steps"
    )
    assert {k: s.status for k, s in found.items()} == dict.fromkeys(
        ("notify", "ticket", "letter"), "completed"
    ), {k: s.error for k, s in found.items()} | {"worker": connector_worker.log_text()[-3000:]}
    number = Case.objects.get(id=case["id"]).case_number
    assert slack_server.requests[0].json == {"channel": "C0PUBLIC01", "text": f"New claim {number} of 1200"}
    assert found["notify"].result == {"ok": True, "channel": "C0PUBLIC01", "ts": "1700000000.000001"}
    [created] = [r for r in jira_server.requests if r.path == "/rest/api/3/issue"]
    assert created.json["fields"]["summary"] == f"Review {number}"
    assert created.json["fields"]["description"]["content"][0]["content"] == [
        {"type": "text", "text": "Slack message 1700000000.000001"}
    ]
    assert found["ticket"].result["key"] == "OPS-1"
    document = Document.objects.get(id=found["letter"].result["documentId"])
    assert str(document.case_id) == case["id"] and document.filename == f"{number}-decision.pdf"
    with vault_storage().open(document.blob.key) as stored:
        text = "".join(page.extract_text() for page in PdfReader(io.BytesIO(stored.read())).pages)
    assert f"Decision {number}" in text and "Amount: 1200" in text
    event = AuditEvent.objects.get(resource=document.audit_resource)
    assert (event.action, event.actor) == ("document:uploaded", "connector:pdf:letter")
    listed = ok(client.get(f"/cases/{case['id']}/documents"))
    assert document.filename in str(listed)
    # The worker's log (INFO, as deployed) names the calls but never the credentials.
    worker_log = connector_worker.log_text()
    assert "connector jira.create_issue" in worker_log
    assert SLACK_TOKEN not in worker_log and JIRA_TOKEN not in worker_log


def test_a_permanent_slack_error_skips_the_step_when_asked(flow_api, slack_server):
    _admin, client = flow_api
    ok(
        client.put(
            "/connectors/slack/config",
            {"config": {"token": SLACK_TOKEN, "apiUrl": slack_server.api_url}},
            format="json",
        )
    )
    steps = [
        {"id": "notify", "name": "Notify", "type": "connector", "connector": "slack", "action": "send_message",
         "config": {"channel": "C0GONE", "text": "x"}, "onFailure": "skip", "retries": 3},
        {"id": "after", "name": "After", "type": "connector", "connector": "slack", "action": "send_message",
         "config": {"channel": "C0PUBLIC01", "text": "still runs"}},
    ]  # fmt: skip
    case = start_case(client, steps, {"amount": 1})
    found = wait_for(settled(case["id"], "notify", "after"), timeout=60, what="the connector steps")
    assert found["notify"].status == CaseStep.SKIPPED and "channel_not_found" in found["notify"].error
    assert found["after"].status == CaseStep.COMPLETED
    # Permanent: tried once, not retried.
    assert [r.json["channel"] for r in slack_server.requests] == ["C0GONE", "C0PUBLIC01"]
