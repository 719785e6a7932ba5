"""The role matrix over every route group, with security on: anonymous 401; viewer may GET;
operator may also schedule, cancel and rerun; admin may do everything. `/api/health` is open.

"Allowed" means the request got past authorization (any answer but 401/403: unknown ids give 404,
empty bodies 400), which is what the matrix is about; each endpoint's own behaviour is tested
with its app."""

from __future__ import annotations

import pytest

from tests.orchestrator.security.helpers import api_key_headers, bearer

pytestmark = pytest.mark.django_db
ROLES = ("viewer", "operator", "admin")

ROUTES = [
    ("GET", "/api/tasks", "viewer"),
    ("GET", "/api/tasks/matrix_task", "viewer"),
    ("PUT", "/api/tasks/matrix_task", "admin"),
    ("DELETE", "/api/tasks/matrix_task", "admin"),
    ("GET", "/api/dags", "viewer"),
    ("GET", "/api/dags/matrix_dag", "viewer"),
    ("PUT", "/api/dags/matrix_dag", "admin"),
    ("DELETE", "/api/dags/matrix_dag", "admin"),
    ("POST", "/api/schedule-task", "operator"),
    ("POST", "/api/schedule-dag", "operator"),
    ("POST", "/api/cancel-run/matrix-run", "operator"),
    ("POST", "/api/rerun/matrix-run", "operator"),
    ("GET", "/api/runs", "viewer"),
    ("GET", "/api/runs/matrix-run", "viewer"),
    ("GET", "/api/runs/matrix-run/graph", "viewer"),
    ("POST", "/api/runs/matrix-run/pause", "operator"),
    ("POST", "/api/runs/matrix-run/resume", "operator"),
    ("GET", "/api/tasks/matrix_task_0000abcd/logs", "viewer"),
    ("GET", "/api/agents", "viewer"),
    ("POST", "/api/agents/matrix-agent@host/retire", "operator"),
    ("GET", "/api/queues", "viewer"),
    ("POST", "/api/queues/matrix-queue/purge", "admin"),
    ("GET", "/api/pools", "viewer"),
    ("PUT", "/api/pools/matrix-pool", "admin"),
    ("GET", "/api/contexts", "viewer"),
    ("GET", "/api/contexts/matrix-ctx", "viewer"),
    ("PUT", "/api/contexts/matrix-ctx", "admin"),
    ("GET", "/api/parameter-sets", "viewer"),
    ("GET", "/api/parameter-sets/matrix-ps", "viewer"),
    ("PUT", "/api/parameter-sets/matrix-ps", "admin"),
    ("GET", "/api/webhooks", "viewer"),
    ("POST", "/api/webhooks", "admin"),
    ("GET", "/api/webhooks/wh_matrix", "viewer"),
    ("DELETE", "/api/webhooks/wh_matrix", "admin"),
    ("GET", "/api/webhooks/wh_matrix/deliveries", "viewer"),
    ("GET", "/api/schedules", "viewer"),
    ("POST", "/api/schedules", "admin"),
    ("GET", "/api/schedules/matrix-sched", "viewer"),
    ("PUT", "/api/schedules/matrix-sched", "admin"),
    ("DELETE", "/api/schedules/matrix-sched", "admin"),
    ("POST", "/api/schedules/matrix-sched/pause", "operator"),
    ("POST", "/api/schedules/matrix-sched/resume", "operator"),
    ("GET", "/api/status", "viewer"),
    ("GET", "/api/metrics", "viewer"),
    ("GET", "/api/audit", "admin"),
    ("GET", "/api/audit/verify", "admin"),
    ("GET", "/api/audit/export", "admin"),
]


def call(api, method: str, path: str, **headers):
    return (
        getattr(api, method.lower())(path, {}, format="json", **headers)
        if method != "GET"
        else api.get(path, **headers)
    )


def assert_code(response, status: int, code: str) -> None:
    assert response.status_code == status, response.content
    assert response.json()["code"] == code


@pytest.fixture(autouse=True)
def security_on(settings):
    settings.ORCH_SECURITY_ENABLED = True


@pytest.mark.parametrize(("method", "path", "needed"), ROUTES, ids=[f"{m} {p}" for m, p, _ in ROUTES])
def test_role_matrix(api, method, path, needed):
    assert_code(call(api, method, path), 401, "not_authenticated")
    assert_code(
        call(api, method, path, HTTP_X_API_KEY="ork_revoked-or-never-issued-key-xxxxxxxx"),
        401,
        "not_authenticated",
    )
    assert_code(
        call(api, method, path, HTTP_AUTHORIZATION="Bearer not.a.valid-jwt"), 401, "not_authenticated"
    )
    for role in ROLES:
        allowed = ROLES.index(role) >= ROLES.index(needed)
        for headers in (api_key_headers(role), bearer(role)):
            response = call(api, method, path, **headers)
            if allowed:
                assert response.status_code not in (401, 403, 405), (role, response.content)
            else:
                assert_code(response, 403, "permission_denied")


def test_health_is_open_to_anonymous_callers(api):
    assert api.get("/api/health").status_code == 200
