"""A case-service worker killed (SIGKILL to its process group) while its agent step waits for the
language model: the step is not lost, and once its lease has run out the periodic scan runs it on
the next worker, which completes it once. The model is asked again (a model call has no side
effect); the step's result, its completion and the activation of the next step happen once."""

from __future__ import annotations

import json
import threading
import uuid
from datetime import timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from casemgmt.workflows.models import CaseStep
from casemgmt.workflows.services import llm_steps
from casemgmt.workflows.tasks import llm_steps_sweep
from shared.api.time import now_ms
from tests.casemgmt.workflows.conftest import ok, task_step
from tests.support.processes import start_celery_worker, wait_for

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]


class HoldingModel(BaseHTTPRequestHandler):
    """A chat-completions server that holds the first request until released, and counts calls."""

    def log_message(self, *args) -> None:
        pass

    def do_POST(self) -> None:  # noqa: N802 - http.server's naming
        self.rfile.read(int(self.headers["Content-Length"]))
        with self.server.lock:
            self.server.calls += 1
            first = self.server.calls == 1
        if first:
            self.server.release.wait(timeout=60)
        raw = json.dumps(
            {"model": "stub", "choices": [{"message": {"role": "assistant", "content": "done"}}]}
        )
        try:
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(raw)))
            self.end_headers()
            self.wfile.write(raw.encode())
        except OSError:
            pass  # the worker that asked is dead


@pytest.fixture
def model():
    server = ThreadingHTTPServer(("127.0.0.1", 0), HoldingModel)
    server.calls, server.lock, server.release = 0, threading.Lock(), threading.Event()
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server
    server.release.set()
    server.shutdown()
    server.server_close()


def test_a_worker_killed_mid_agent_step_resumes_without_doing_it_twice(flow, settings, subprocess_env, model):
    queue = f"case.agents-kill-{uuid.uuid4().hex[:6]}"
    settings.WORKFLOW_AGENT_QUEUE = queue  # this process (the scan) queues where the workers listen
    env = {**subprocess_env, "CASE_LLM_BASE_URL": f"http://127.0.0.1:{model.server_address[1]}/v1",
           "CASE_LLM_API_KEY": "k", "CASE_LLM_MODEL": "stub", "CASE_LLM_TIMEOUT_SECONDS": "30",
           "CASE_WORKFLOW_AGENT_QUEUE": queue}  # fmt: skip
    name = f"p{uuid.uuid4().hex[:6]}"
    ok(
        flow.client.post(
            "/prompt-templates", {"name": name, "template": "Summarise {{case_number}}"}, format="json"
        ),
        201,
    )
    agent = {
        "id": "summary",
        "name": "Summary",
        "type": "agent",
        "promptTemplate": name,
        "outputKey": "summary",
    }
    flow.workflow([agent, task_step("review", dependsOn=["summary"])])

    doomed = start_celery_worker(name="agent-doomed", app="casemgmt.config", queues=[queue], env=env)
    try:
        case = flow.case()
        wait_for(lambda: model.calls == 1, timeout=60, what="the agent step to ask the model")
        doomed.kill()  # SIGKILL mid-call
        doomed.proc.wait(timeout=10)
    finally:
        doomed.stop()
    model.release.set()
    step = CaseStep.objects.get(case_id=case["id"], step_id="summary")
    assert (step.status, step.attempts) == ("active", 1)  # not lost: claimed, its lease running

    # The lease (the model timeout plus a margin of a minute) runs out: moved to the past here.
    CaseStep.objects.filter(pk=step.pk).update(attempt_deadline=now_ms() - timedelta(seconds=1))
    heir = start_celery_worker(name="agent-heir", app="casemgmt.config", queues=[queue], env=env)
    try:

        def rescanned_and_done() -> bool:
            llm_steps_sweep()  # the safety net: re-sends LLM steps whose run was lost
            return CaseStep.objects.get(pk=step.pk).status == "completed"

        wait_for(rescanned_and_done, timeout=60, interval=0.5, what="the scan to run the step again")
    finally:
        heir.stop()
    step.refresh_from_db()
    assert step.attempts == 2 and step.result["summary"] == "done", step.result
    assert model.calls == 2
    assert CaseStep.objects.filter(case_id=case["id"], step_id="review").count() == 1
    assert flow.statuses(case["id"]) == {"summary": "completed", "review": "active"}
    assert llm_steps.llm_steps_lost() == []  # nothing left for the scan to send
