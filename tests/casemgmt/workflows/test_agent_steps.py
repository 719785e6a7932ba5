"""Agent steps against a real local chat-completions server, run by a real Celery worker."""

from __future__ import annotations

import json
import re
import threading
import uuid
from datetime import timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from casemgmt.audit.models import AuditEvent
from casemgmt.cases.models import Case
from casemgmt.workflows.models import CaseStep
from casemgmt.workflows.services import llm_steps
from casemgmt.workflows.tasks import backoff_seconds, llm_step_run
from shared.api.time import now_ms
from tests.casemgmt.workflows.conftest import ok, task_step
from tests.support.processes import start_celery_worker, wait_for

AGENT_QUEUE = f"case.agents-{uuid.uuid4().hex[:6]}"
PROMPT = "MODE={{case_data.kind}} case {{case_number}} amount {{case_data.amount}}"


class ChatHandler(BaseHTTPRequestHandler):
    def log_message(self, *args) -> None:  # keep test output quiet
        pass

    def do_POST(self) -> None:  # noqa: N802 - http.server's naming
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        content = body["messages"][0]["content"]
        self.server.seen.append({"path": self.path, "auth": self.headers.get("Authorization"), "body": body})
        mode = re.search(r"MODE=(\w+)", content).group(1)
        number = re.search(r"case (\S+)", content).group(1)
        if mode == "timeout":
            self.server.release.wait(timeout=5)  # longer than the client's timeout
        if (
            mode == "flaky"
            and sum(1 for s in self.server.seen if number in s["body"]["messages"][0]["content"]) == 1
        ):
            return self.answer(503, {"error": "overloaded"})
        if mode == "malformed":
            return self.answer(200, {"choices": []})
        reply = json.dumps({"risk": "low", "case": number}) if mode == "json" else f"Summary of {number}"
        self.answer(
            200, {"model": "stub-model", "choices": [{"message": {"role": "assistant", "content": reply}}]}
        )
        return None

    def answer(self, status: int, payload: dict) -> None:
        raw = json.dumps(payload).encode()
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(raw)))
            self.end_headers()
            self.wfile.write(raw)
        except OSError:
            pass  # the client gave up (timeout test)


@pytest.fixture(scope="module")
def llm_stub():
    server = ThreadingHTTPServer(("127.0.0.1", 0), ChatHandler)
    server.seen, server.release = [], threading.Event()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.release.set()
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def agent_worker(subprocess_env, llm_stub):
    env = {
        **subprocess_env,
        "CASE_LLM_BASE_URL": f"http://127.0.0.1:{llm_stub.server_address[1]}/v1",
        "CASE_LLM_API_KEY": "test-key",
        "CASE_LLM_MODEL": "stub-model",
        "CASE_LLM_TIMEOUT_SECONDS": "0.5",
        "CASE_LLM_RETRY_BASE_SECONDS": "0.05",
        "CASE_LLM_MAX_ATTEMPTS": "2",
        "CASE_WORKFLOW_AGENT_QUEUE": AGENT_QUEUE,
    }
    worker = start_celery_worker(name="agent-worker", app="casemgmt.config", queues=[AGENT_QUEUE], env=env)
    yield worker
    worker.stop()


@pytest.fixture
def agent_flow(flow, settings, llm_stub):
    llm_stub.seen.clear()  # case numbers repeat across tests (each test has a fresh tenant)
    settings.WORKFLOW_AGENT_QUEUE = AGENT_QUEUE  # the test process queues where agent_worker listens
    ok(
        flow.client.post(
            "/prompt-templates",
            {"name": f"p{uuid.uuid4().hex[:6]}", "template": PROMPT, "temperature": 0.1, "maxTokens": 50},
            format="json",
        ),
        201,
    )
    return flow


def publish_agent(flow, **step):
    name = ok(flow.client.get("/prompt-templates"))[0]["name"]
    agent = {"id": "summary", "name": "Summary", "type": "agent", "promptTemplate": name, **step}
    flow.workflow([agent, task_step("review")])


def wait_step(case_id: str, step_id: str, statuses=("completed", "failed")) -> CaseStep:
    return wait_for(
        lambda: CaseStep.objects.filter(case_id=case_id, step_id=step_id, status__in=statuses).first(),
        timeout=30,
        what=f"step {step_id} to reach {statuses}",
    )


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
class TestThroughTheWorker:
    def test_success_stores_the_reply_and_activates_the_next_step(self, agent_flow, agent_worker, llm_stub):
        publish_agent(agent_flow, outputKey="summary")
        case = agent_flow.case({"kind": "success", "amount": 7})
        step = wait_step(case["id"], "summary")
        assert step.status == "completed", (step.error, agent_worker.log_text()[-3000:])
        assert step.result == {"summary": f"Summary of {case['caseNumber']}", "model": "stub-model"}
        assert agent_flow.statuses(case["id"]) == {"summary": "completed", "review": "active"}
        request = next(s for s in llm_stub.seen if case["caseNumber"] in s["body"]["messages"][0]["content"])
        assert request["path"] == "/v1/chat/completions" and request["auth"] == "Bearer test-key"
        body = request["body"]
        assert body["model"] == "stub-model" and body["temperature"] == 0.1 and body["max_tokens"] == 50
        assert body["messages"][0]["content"] == f"MODE=success case {case['caseNumber']} amount 7"

    def test_json_reply_is_parsed(self, agent_flow, agent_worker, llm_stub):
        publish_agent(agent_flow, responseFormat="json")
        case = agent_flow.case({"kind": "json"})
        step = wait_step(case["id"], "summary")
        assert step.result["output"] == {"risk": "low", "case": case["caseNumber"]}
        request = next(s for s in llm_stub.seen if case["caseNumber"] in s["body"]["messages"][0]["content"])
        assert request["body"]["response_format"] == {"type": "json_object"}

    def test_transient_failure_is_retried(self, agent_flow, agent_worker, llm_stub):
        publish_agent(agent_flow)
        case = agent_flow.case({"kind": "flaky"})
        step = wait_step(case["id"], "summary")
        assert step.status == "completed" and step.attempts == 2

    def test_timeout_fails_the_step_after_the_retries(self, agent_flow, agent_worker, llm_stub):
        publish_agent(agent_flow)
        case = agent_flow.case({"kind": "timeout"})
        step = wait_step(case["id"], "summary")
        assert step.status == "failed" and "timed out" in step.error and "after 2 attempts" in step.error
        assert step.attempts == 2
        assert sum(1 for s in llm_stub.seen if case["caseNumber"] in s["body"]["messages"][0]["content"]) == 2
        # onFailure defaults to fail_case: the workflow halts, its pending steps are skipped.
        assert agent_flow.statuses(case["id"]) == {"summary": "failed", "review": "skipped"}

    def test_malformed_reply_fails_at_once(self, agent_flow, agent_worker):
        publish_agent(agent_flow)
        case = agent_flow.case({"kind": "malformed"})
        step = wait_step(case["id"], "summary")
        assert step.status == "failed" and "malformed" in step.error and step.attempts == 1


@pytest.mark.django_db
class TestInProcess:
    """Paths that need no model server: the task function called directly, no worker."""

    def test_not_configured_fails_the_step(self, agent_flow, settings):
        settings.LLM_BASE_URL = ""
        publish_agent(agent_flow)
        case = agent_flow.case({"kind": "success"})
        step = CaseStep.objects.get(case_id=case["id"], step_id="summary")
        assert step.status == "active"
        llm_step_run(step.pk, 1)
        step.refresh_from_db()
        assert step.status == "failed" and step.error.startswith("not_configured")
        llm_step_run(step.pk, 1)  # a duplicate delivery changes nothing
        step.refresh_from_db()
        assert step.attempts == 1

    def test_failure_escalates_to_a_human_task_when_configured(
        self, agent_flow, settings, api, make_user, tenant
    ):
        settings.LLM_BASE_URL = ""
        publish_agent(
            agent_flow, onFailure="escalate", formSchema={"type": "object", "required": ["summary"]}
        )
        case = agent_flow.case({"kind": "success"})
        step = CaseStep.objects.get(case_id=case["id"], step_id="summary")
        llm_step_run(step.pk, 1)
        worker = make_user(tenant, permissions=["tasks:read", "tasks:complete"])
        task = ok(api(worker).get("/tasks/inbox"))["data"][0]
        assert task["stepId"] == "summary" and task["escalated"] is True
        assert task["escalationReason"].startswith("not_configured")
        base = f"/tasks/{case['id']}/summary/complete"
        assert api(worker).post(base, {"data": {}}, format="json").status_code == 400
        ok(api(worker).post(base, {"data": {"summary": "written by hand"}}, format="json"))
        assert agent_flow.statuses(case["id"]) == {"summary": "completed", "review": "active"}

    def test_failure_can_skip_the_step(self, agent_flow, settings):
        settings.LLM_BASE_URL = ""
        publish_agent(agent_flow, onFailure="skip")
        case = agent_flow.case({"kind": "success"})
        llm_step_run(CaseStep.objects.get(case_id=case["id"], step_id="summary").pk, 1)
        assert agent_flow.statuses(case["id"]) == {"summary": "skipped", "review": "active"}

    def test_a_halted_case_ignores_a_late_agent_run(self, agent_flow, settings):
        publish_agent(agent_flow)
        case = agent_flow.case({"kind": "success"})
        ok(agent_flow.client.post(f"/cases/{case['id']}/close", {}, format="json"))
        step = CaseStep.objects.get(case_id=case["id"], step_id="summary")
        llm_step_run(step.pk, 1)
        step.refresh_from_db()
        assert step.status == "skipped" and step.attempts == 0
        assert Case.objects.get(id=case["id"]).status == "closed"

    def test_an_unexpected_exception_fails_the_step_and_halts_the_workflow(self, agent_flow, settings):
        # httpx raises InvalidURL (not an httpx.HTTPError) for this base URL: before the fix it
        # escaped the task and left the step active forever.
        settings.LLM_BASE_URL, settings.LLM_MODEL = "http://bad\x00host/v1", "stub-model"
        publish_agent(agent_flow, onFailure="fail_case")
        case = agent_flow.case({"kind": "success"})
        step = CaseStep.objects.get(case_id=case["id"], step_id="summary")
        llm_step_run(step.pk, 1)
        step.refresh_from_db()
        assert step.status == "failed" and step.error.startswith("unexpected error: InvalidURL")
        assert agent_flow.statuses(case["id"]) == {"summary": "failed", "review": "skipped"}
        actions = dict(
            AuditEvent.objects.filter(
                tenant_id=step.tenant_id, action__in=("step:failed", "workflow:failed")
            ).values_list("action", "resource")
        )
        assert actions == {
            "step:failed": f"cases/{case['id']}/steps/summary",
            "workflow:failed": f"cases/{case['id']}",
        }
        assert Case.objects.get(id=case["id"]).status == "active"  # decision: a person closes it

    def test_a_lost_attempt_is_run_again_by_a_redelivery(self, agent_flow, settings, llm_stub):
        settings.LLM_BASE_URL = f"http://127.0.0.1:{llm_stub.server_address[1]}/v1"
        settings.LLM_MODEL = "stub-model"
        publish_agent(agent_flow)
        case = agent_flow.case({"kind": "success"})
        step = CaseStep.objects.get(case_id=case["id"], step_id="summary")
        # A worker claims attempt 1 and dies before finishing (acks_late redelivers the message).
        assert llm_steps.llm_step_claim_attempt(step_pk=step.pk, attempt=1) == 1
        assert llm_steps.llm_steps_lost() == []  # the lease still runs
        llm_step_run(step.pk, 1)  # a redelivery within the lease is a duplicate: nothing happens
        step.refresh_from_db()
        assert step.status == "active" and step.attempts == 1
        # Once the lease has passed the run counts as lost: the scan finds it and a redelivery runs it.
        CaseStep.objects.filter(pk=step.pk).update(attempt_deadline=now_ms() - timedelta(seconds=1))
        assert llm_steps.llm_steps_lost() == [(step.pk, 1)]
        llm_step_run(step.pk, 1)
        step.refresh_from_db()
        assert step.status == "completed" and step.attempts == 2
        assert step.result["output"] == f"Summary of {case['caseNumber']}"

    def test_an_agent_step_never_started_is_found_by_the_scan(self, agent_flow, settings):
        publish_agent(agent_flow)
        case = agent_flow.case({"kind": "success"})
        step = CaseStep.objects.get(case_id=case["id"], step_id="summary")
        assert llm_steps.llm_steps_lost() == []
        later = now_ms() + llm_steps.attempt_lease() + timedelta(seconds=1)
        assert llm_steps.llm_steps_lost(now=later) == [(step.pk, 1)]

    def test_repeatedly_lost_attempts_end_in_failure(self, agent_flow, settings):
        settings.LLM_MAX_ATTEMPTS = 2
        publish_agent(agent_flow, onFailure="skip")
        case = agent_flow.case({"kind": "success"})
        step = CaseStep.objects.get(case_id=case["id"], step_id="summary")
        CaseStep.objects.filter(pk=step.pk).update(
            attempts=2, attempt_deadline=now_ms() - timedelta(seconds=1)
        )
        llm_step_run(step.pk, 2)
        step.refresh_from_db()
        assert step.status == "skipped" and "worker lost the run" in step.error

    def test_escalation_opens_a_task_with_sla_and_assignee(
        self, agent_flow, settings, make_user, tenant, api
    ):
        settings.LLM_BASE_URL = ""
        worker = make_user(tenant, permissions=["tasks:read", "tasks:complete"])
        publish_agent(agent_flow, onFailure="escalate", slaHours=4, assignTo=str(worker.id))
        case = agent_flow.case({"kind": "success"})
        step = CaseStep.objects.get(case_id=case["id"], step_id="summary")
        llm_step_run(step.pk, 1)
        step.refresh_from_db()
        assert step.is_task and step.status == "active" and step.assigned_to_id == worker.id
        assert step.due_at == step.escalated_at + timedelta(hours=4)
        task = ok(api(worker).get(f"/tasks/{case['id']}/summary"))
        assert task["assignedTo"] == str(worker.id) and task["dueAt"] is not None
        actions = list(
            AuditEvent.objects.filter(resource__startswith=f"cases/{case['id']}/")
            .order_by("sequence")
            .values_list("action", flat=True)
        )
        assert actions[-3:] == ["step:failed", "task:escalated", "task:assigned"]

    def test_fail_is_an_alias_of_fail_case(self, agent_flow, settings):
        settings.LLM_BASE_URL = ""
        publish_agent(agent_flow, onFailure="fail")
        case = agent_flow.case({"kind": "success"})
        llm_step_run(CaseStep.objects.get(case_id=case["id"], step_id="summary").pk, 1)
        assert agent_flow.statuses(case["id"]) == {"summary": "failed", "review": "skipped"}


def test_backoff_is_exponential_and_capped(settings):
    settings.LLM_RETRY_BASE_SECONDS, settings.LLM_RETRY_MAX_SECONDS = 1.0, 60.0
    assert [backoff_seconds(n) for n in (1, 2, 3, 4, 8)] == [1.0, 2.0, 4.0, 8.0, 60.0]
