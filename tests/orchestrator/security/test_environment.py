"""An operator must not run commands an admin did not define: no value that reaches a command's
environment may set a variable that changes how a shell, the loader or an interpreter starts
(BASH_ENV, LD_PRELOAD, PATH, ...), whatever path it takes (schedule-task, schedule-dag, a
parameter set, a rerun, a schedule, a definition); a task's `allowed_env` narrows what scheduling
may set; the run's audit event keeps names and a hash, never values. Over HTTP, security on."""

from __future__ import annotations

import hashlib
import json

import pytest
from django.utils import timezone

from orchestrator.audit.models import AuditEvent
from orchestrator.definitions.models import ParameterSet
from orchestrator.runs.models import Run, TaskRun
from tests.orchestrator.helpers import assert_error
from tests.orchestrator.security.helpers import api_key_headers

pytestmark = pytest.mark.django_db
PAYLOAD = "$(id >&2)"
REFUSED = ["BASH_ENV", "ENV", "LD_PRELOAD", "LD_LIBRARY_PATH", "PATH", "PYTHONPATH", "PERL5OPT",
           "PERLLIB", "RUBYOPT", "NODE_OPTIONS", "IFS", "SHELLOPTS", "BASHOPTS", "PS4", "PROMPT_COMMAND",
           "CDPATH", "GLOBIGNORE", "BASH_FUNC_ls", "HOME", "JAVA_TOOL_OPTIONS", "GCONV_PATH",
           "HOSTALIASES", "LOCALDOMAIN", "RES_OPTIONS", "TZDIR", "GIT_SSH_COMMAND", "ORCH_RUN_ID"]  # fmt: skip


@pytest.fixture
def admin(settings):
    settings.ORCH_SECURITY_ENABLED = True
    return api_key_headers("admin", name="env-admin")


@pytest.fixture
def operator(admin):
    return api_key_headers("operator", name="env-operator")


@pytest.fixture
def defined(api, admin):
    """A bash task, a task it depends on, and a DAG of both, defined by an admin."""
    for task_id, body in (
        ("up", {"command": "true"}),
        ("job", {"command": "bash -c 'echo ${GREETING}'", "dependencies": ["up"]}),
    ):
        assert api.put(f"/api/tasks/{task_id}", body, format="json", **admin).status_code == 201
    assert api.put("/api/dags/pipeline", {"tasks": ["up", "job"]}, format="json", **admin).status_code == 201


def post(api, path: str, body: dict, headers: dict):
    return api.post(path, body, format="json", **headers)


def assert_refused(response, field: str) -> None:
    body = assert_error(response, 400, "validation_error", field=field)
    assert PAYLOAD not in json.dumps(body)


def assert_nothing_queued() -> None:
    assert not Run.objects.exists() and not TaskRun.objects.exists()


@pytest.mark.parametrize("name", REFUSED)
def test_schedule_task_refuses_each_name_in_env_vars_and_parameters(api, defined, operator, name):
    body = {"task_id": "job", "env_vars": {name: PAYLOAD}}
    assert_refused(post(api, "/api/schedule-task", body, operator), f"env_vars.{name}")
    body = {"task_id": "job", "parameters": {name: PAYLOAD}}
    assert_refused(post(api, "/api/schedule-task", body, operator), f"parameters.{name}")
    body = {"task_id": "job", "parameters": {f"up.{name}": PAYLOAD}}
    assert_refused(post(api, "/api/schedule-task", body, operator), f"parameters.up.{name}")
    assert_nothing_queued()


def test_schedule_dag_refuses_env_vars_and_parameters(api, defined, operator):
    body = {"dag_id": "pipeline", "env_vars": {"BASH_ENV": PAYLOAD}}
    assert_refused(post(api, "/api/schedule-dag", body, operator), "env_vars.BASH_ENV")
    body = {"dag_id": "pipeline", "parameters": {"job.LD_PRELOAD": "/tmp/x.so"}}
    assert_refused(post(api, "/api/schedule-dag", body, operator), "parameters.job.LD_PRELOAD")
    assert_nothing_queued()


def test_names_and_values_must_be_plain_and_bounded(api, defined, operator):
    cases = [
        ({"BASH_FUNC_ls%%": "() { id; }"}, "env_vars.BASH_FUNC_ls%%"),
        ({"A" * 129: "x"}, f"env_vars.{'A' * 129}"),
        ({"GREETING": "x" * (32 * 1024 + 1)}, "env_vars.GREETING"),
    ]
    for env_vars, field in cases:
        assert_refused(
            post(api, "/api/schedule-task", {"task_id": "job", "env_vars": env_vars}, operator), field
        )
    # NUL, which no process environment can hold, is refused by the body parser already
    nul = post(api, "/api/schedule-task", {"task_id": "job", "env_vars": {"GREETING": "a\x00b"}}, operator)
    assert_error(nul, 400, "validation_error")
    assert_nothing_queued()
    ok = {"GREETING": "x" * (32 * 1024), "A" * 128: "y"}
    assert post(api, "/api/schedule-task", {"task_id": "job", "env_vars": ok}, operator).status_code == 201


def test_a_parameter_set_stored_before_the_rule_cannot_carry_a_refused_name(api, defined, operator):
    now = timezone.now()
    # what an older version accepted (its PUT refuses it now)
    ParameterSet.objects.create(id="legacy", parameters={"BASH_ENV": PAYLOAD}, created_at=now, updated_at=now)
    body = {"task_id": "job", "parameter_set": "legacy"}
    assert_refused(post(api, "/api/schedule-task", body, operator), "parameters.BASH_ENV")
    assert_refused(post(api, "/api/schedule-dag", {"dag_id": "pipeline", "parameter_set": "legacy"}, operator),
                   "parameters.BASH_ENV")  # fmt: skip
    assert_nothing_queued()


def test_a_rerun_does_not_reuse_refused_values_stored_before_the_rule(api, defined, operator, admin):
    run_id = post(api, "/api/schedule-task", {"task_id": "job"}, operator).json()["run_id"]
    assert post(api, f"/api/cancel-run/{run_id}", {}, operator).status_code == 200
    Run.objects.filter(pk=run_id).update(env_vars={"BASH_ENV": PAYLOAD}, parameters={"up.PATH": "/tmp"})
    for flags in ({}, {"latest": True}, {"failed_only": True}):
        assert_refused(post(api, f"/api/rerun/{run_id}", flags, operator), "env_vars.BASH_ENV")
    assert Run.objects.count() == 1
    Run.objects.filter(pk=run_id).update(env_vars={})
    assert_refused(post(api, f"/api/rerun/{run_id}", {}, operator), "parameters.up.PATH")
    # reset_params leaves the original's values out: nothing refused is reused
    rerun = post(api, f"/api/rerun/{run_id}", {"reset_params": True}, operator)
    assert rerun.status_code == 201, rerun.content
    assert Run.objects.get(pk=rerun.json()["new_run_id"]).env_vars == {}


def test_admin_definitions_refuse_the_names_too(api, defined, admin):
    """Contexts and parameter sets are combined with any task by whoever schedules, so even an
    admin cannot put such a variable in data; a command that needs one sets it itself."""
    puts = [
        ("/api/tasks/t2", {"command": "true", "parameters": {"BASH_ENV": PAYLOAD}}, "parameters.BASH_ENV"),
        (
            "/api/dags/d2",
            {"tasks": [{"id": "job", "parameters": {"PATH": "/tmp"}}]},
            "tasks[0].parameters.PATH",
        ),
        ("/api/contexts/c2", {"variables": {"LD_PRELOAD": "/tmp/x.so"}}, "variables.LD_PRELOAD"),
        ("/api/parameter-sets/p2", {"parameters": {"job.PYTHONPATH": "/tmp"}}, "parameters.job.PYTHONPATH"),
    ]
    for path, body, field in puts:
        assert_refused(api.put(path, body, format="json", **admin), field)
    schedule = {"task_id": "job", "interval_seconds": 60, "parameters": {"BASH_ENV": PAYLOAD}}
    assert_refused(post(api, "/api/schedules", schedule, admin), "parameters.BASH_ENV")
    # and an admin scheduling by hand is held to the same rule as an operator
    assert_refused(post(api, "/api/schedule-task", {"task_id": "job", "env_vars": {"PATH": "/x"}}, admin),
                   "env_vars.PATH")  # fmt: skip


# allowed_env ------------------------------------------------------------------------------------


def test_allowed_env_limits_what_scheduling_may_set(api, defined, admin, operator):
    body = {"command": "bash -c 'echo ${GREETING}'", "dependencies": ["up"], "allowed_env": ["GREETING"]}
    assert api.put("/api/tasks/job", body, format="json", **admin).status_code == 200
    refused = [
        ("/api/schedule-task", {"task_id": "job", "env_vars": {"OTHER": "x"}}, "env_vars.OTHER"),
        ("/api/schedule-task", {"task_id": "job", "parameters": {"OTHER": "x"}}, "parameters.OTHER"),
        ("/api/schedule-dag", {"dag_id": "pipeline", "parameters": {"job.OTHER": "x"}}, "parameters.OTHER"),
    ]
    for path, request, field in refused:
        assert_error(post(api, path, request, operator), 400, "validation_error", field=field)
    assert_nothing_queued()
    schedule = {"task_id": "job", "interval_seconds": 60, "parameters": {"OTHER": "x"}}
    assert_error(
        post(api, "/api/schedules", schedule, admin), 400, "validation_error", field="parameters.OTHER"
    )
    # declared names pass; a task that declares nothing (up) takes any name the rule lets through
    ok = post(api, "/api/schedule-task", {"task_id": "job", "env_vars": {"GREETING": "hi"}}, operator)
    assert ok.status_code == 201, ok.content
    ok = post(api, "/api/schedule-dag", {"dag_id": "pipeline", "parameters": {"up.OTHER": "x"}}, operator)
    assert ok.status_code == 201, ok.content


def test_allowed_env_is_set_by_admins_only_and_checked(api, defined, admin):
    body = {"command": "true", "allowed_env": ["B", "A", "B"]}
    viewer = api_key_headers("viewer")
    for headers in (viewer, api_key_headers("operator")):
        response = api.put("/api/tasks/declared", body, format="json", **headers)
        assert_error(response, 403, "permission_denied")
    assert_error(api.put("/api/tasks/declared", body, format="json"), 401, "not_authenticated")
    created = api.put("/api/tasks/declared", body, format="json", **admin)
    assert created.status_code == 201 and created.json()["allowed_env"] == ["A", "B"]
    assert api.get("/api/tasks/declared", **viewer).json()["allowed_env"] == ["A", "B"]
    version = created.json()["version"]
    again = api.put("/api/tasks/declared", {**body, "allowed_env": ["A", "B"]}, format="json", **admin)
    assert again.json()["version"] == version  # the same set is an unchanged definition
    for value, field in (
        (["LD_PRELOAD"], "allowed_env[0]"),
        (["ok", "1bad"], "allowed_env[1]"),
        ("A", "allowed_env"),
    ):
        response = api.put(
            "/api/tasks/declared", {"command": "true", "allowed_env": value}, format="json", **admin
        )
        assert_error(response, 400, "validation_error", field=field)
    cleared = api.put("/api/tasks/declared", {"command": "true"}, format="json", **admin)
    assert cleared.json()["allowed_env"] is None
    assert api.get(f"/api/tasks/declared?version={version}", **admin).json()["allowed_env"] == ["A", "B"]


# audit ------------------------------------------------------------------------------------------


def sha256_of(values: dict) -> str:
    return hashlib.sha256(json.dumps(values, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def test_the_run_audit_event_has_names_and_a_hash_never_values(api, defined, operator):
    env_vars, parameters = {"GREETING": "secret-greeting-1"}, {"up.TOKEN": "secret-token-2"}
    body = {"task_id": "job", "env_vars": env_vars, "parameters": parameters}
    run_id = post(api, "/api/schedule-task", body, operator).json()["run_id"]
    event = AuditEvent.objects.get(action="run.scheduled", resource=f"runs/{run_id}")
    assert event.actor == "env-operator"
    assert event.changes["env_vars"] == {"names": ["GREETING"], "sha256": sha256_of(env_vars)}
    assert event.changes["parameters"] == {"names": ["up.TOKEN"], "sha256": sha256_of(parameters)}
    assert post(api, f"/api/cancel-run/{run_id}", {}, operator).status_code == 200
    new_run = post(api, f"/api/rerun/{run_id}", {}, operator).json()["new_run_id"]
    rerun = AuditEvent.objects.get(action="run.rerun", resource=f"runs/{new_run}")
    assert rerun.changes["env_vars"] == event.changes["env_vars"]
    assert rerun.changes["parameters"] == event.changes["parameters"]
    dumped = json.dumps(list(AuditEvent.objects.values_list("changes", flat=True)))
    assert "secret-greeting-1" not in dumped and "secret-token-2" not in dumped
    # nothing given: empty names and no hash
    bare = post(api, "/api/schedule-task", {"task_id": "up"}, operator).json()["run_id"]
    changes = AuditEvent.objects.get(action="run.scheduled", resource=f"runs/{bare}").changes
    assert changes["env_vars"] == changes["parameters"] == {"names": [], "sha256": None}
