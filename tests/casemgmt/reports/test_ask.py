"""POST /reports/ask against a real local chat-completions server that answers with SQL, good and
hostile; what the model writes passes the same checks as a saved query before it runs."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from casemgmt.audit.models import AuditEvent
from casemgmt.cases.models import Case

pytestmark = pytest.mark.django_db

# question -> the model's reply (None: the server answers HTTP 500)
REPLIES: dict[str, str | None] = {
    "how many cases by status?": "SELECT status, count(*) AS n FROM cases GROUP BY status ORDER BY status",
    "fenced": "Here you go:\n```sql\nSELECT count(*) AS open FROM cases WHERE status = 'active'\n```",
    "delete": "DELETE FROM cases",
    "drop": "SELECT 1; DROP TABLE cases_case",
    "raw table": "SELECT id FROM cases UNION SELECT id FROM cases_case",
    "catalog": "SELECT rolname FROM pg_roles",
    "sleep": "SELECT pg_sleep(30)",
    "tenant": "SELECT * FROM cases WHERE set_config('app.tenant_id', '00000000-0000-0000-0000-000000000000', true) <> ''",
    "cte write": "WITH x AS (UPDATE cases SET status = 'closed' RETURNING id) SELECT count(*) FROM x",
    "broken": "SELECT 1 / 0 AS x",
    "prose": "I cannot answer that.",
    "overloaded": None,
}


class ChatHandler(BaseHTTPRequestHandler):
    def log_message(self, *args) -> None:  # keep test output quiet
        pass

    def do_POST(self) -> None:  # noqa: N802 - http.server's naming
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.server.seen.append({"path": self.path, "auth": self.headers.get("Authorization"), "body": body})
        reply = REPLIES[body["messages"][-1]["content"]]
        if reply is None:
            return self.answer(500, {"error": "overloaded"})
        self.answer(
            200, {"model": "stub-model", "choices": [{"message": {"role": "assistant", "content": reply}}]}
        )
        return None

    def answer(self, status: int, payload: dict) -> None:
        raw = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)


@pytest.fixture(scope="module")
def llm_stub():
    server = ThreadingHTTPServer(("127.0.0.1", 0), ChatHandler)
    server.seen = []
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


@pytest.fixture
def model(settings, llm_stub):
    settings.LLM_BASE_URL = f"http://127.0.0.1:{llm_stub.server_address[1]}/v1"
    settings.LLM_API_KEY = "test-key"
    settings.LLM_MODEL = "stub-model"
    settings.LLM_TIMEOUT_SECONDS = 5
    llm_stub.seen.clear()
    return llm_stub


def ask(client, question: str):
    return client.post("/reports/ask", {"question": question}, format="json")


def test_a_question_is_answered_with_the_query_and_its_rows(api, analyst, model, tenant, world, other_world):
    response = ask(api(analyst), "how many cases by status?")
    assert response.status_code == 200, response.json()
    assert response.json() == {
        "question": "how many cases by status?",
        "query": "SELECT status, COUNT(*) AS n FROM cases GROUP BY status ORDER BY status",
        "result": [
            {"status": "active", "n": 3},
            {"status": "cancelled", "n": 1},
            {"status": "closed", "n": 2},
        ],
        "truncated": False,
    }
    request = model.seen[-1]
    assert request["path"] == "/v1/chat/completions" and request["auth"] == "Bearer test-key"
    assert request["body"]["model"] == "stub-model" and request["body"]["temperature"] == 0
    system = request["body"]["messages"][0]["content"]
    assert "cases(id uuid, case_number text" in system and "tasks(id bigint, case_id uuid" in system
    assert "tenant" not in system  # the model never sees or chooses the tenant
    event = AuditEvent.objects.get(tenant_id=tenant.id, action="report:asked")
    assert event.changes["question"] == "how many cases by status?"


def test_sql_in_a_code_fence_is_taken_from_it(api, analyst, model, world):
    body = ask(api(analyst), "fenced").json()
    assert body["query"] == "SELECT COUNT(*) AS open FROM cases WHERE status = 'active'"
    assert body["result"] == [{"open": 3}]


@pytest.mark.parametrize(
    ("question", "reason"),
    [
        ("delete", "only SELECT"),
        ("drop", "exactly one statement"),
        ("raw table", "table cases_case is not allowed"),
        ("catalog", "table pg_roles is not allowed"),
        ("sleep", "pg_sleep"),
        ("tenant", "set_config"),
        ("cte write", "UPDATE"),
        ("prose", "does not parse"),
    ],
)
def test_hostile_or_useless_sql_is_refused_before_it_runs(api, analyst, model, world, question, reason):
    response = ask(api(analyst), question)
    assert response.status_code == 400, response.json()
    body = response.json()
    assert body["code"] == "validation_error" and reason in body["message"]
    assert body["message"].startswith("Query refused: ") and body["details"]["field"] == "query"
    assert body["details"]["query"] == REPLIES[question].strip()
    assert Case.objects.filter(tenant=world.tenant, status="active").count() == 3


def test_generated_sql_that_fails_is_a_400_with_the_query(api, analyst, model, world):
    body = ask(api(analyst), "broken").json()
    assert body["code"] == "query_failed" and body["details"]["query"] == "SELECT 1 / 0 AS x"


def test_a_failing_model_is_503(api, analyst, model):
    response = ask(api(analyst), "overloaded")
    assert response.status_code == 503 and response.json()["code"] == "llm_unavailable"


def test_no_model_is_503_not_configured(api, analyst, settings, llm_stub):
    settings.LLM_BASE_URL = ""
    settings.LLM_MODEL = ""
    llm_stub.seen.clear()
    response = ask(api(analyst), "how many cases by status?")
    assert response.status_code == 503 and response.json()["code"] == "not_configured"
    assert llm_stub.seen == []


@pytest.mark.parametrize("body", [{}, {"question": ""}, {"question": 5}, {"question": "x" * 2001}])
def test_bad_questions_are_400(api, analyst, model, body):
    assert api(analyst).post("/reports/ask", body, format="json").status_code == 400
    assert model.seen == []
