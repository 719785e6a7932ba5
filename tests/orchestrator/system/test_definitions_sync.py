"""Definitions as code on the orchestrator: `manage_orch.py definitions sync|export` over YAML
folders (validated by the API's serializers and services, one transaction, audited with its
source), and the HTTP dry run `POST /api/definitions/plan`."""

from __future__ import annotations

import io
import shutil
import threading
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from django.db import close_old_connections

from orchestrator.audit.models import AuditEvent
from orchestrator.definitions.models import Context, Dag, DefinitionVersion, Pool, TaskDefinition
from orchestrator.schedules.models import Schedule
from orchestrator.system.definitions import sync_apply, sync_plan
from shared.api.errors import VersionConflict
from shared.definitions.files import read_documents
from tests.orchestrator.helpers import assert_error
from tests.orchestrator.security.helpers import api_key_headers

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "orchestrator"

pytestmark = pytest.mark.django_db

EXTRA = """
kind: pool
id: small
slots: 2
---
kind: context
id: base
variables: {REGION: eu}
---
kind: context
id: prod
extends: base
variables: {STAGE: prod}
---
- kind: task
  id: extra
  command: echo extra $N
  parameters: {N: 3}
  allowed_env: []
  pool: small
  queue: ""
- kind: dag
  id: nightly
  tasks:
    - {id: extra, parameters: {N: "4"}}
    - demo-report
  context: prod
  max_active_runs: 1
  tags: [nightly]
- kind: schedule
  id: nightly-at-two
  dag_id: nightly
  cron: "0 2 * * *"
  timezone: Europe/Berlin
  start_date: "2026-01-01T00:00:00Z"
  paused: true
"""


def sync(folder: Path, *args: str) -> str:
    out = io.StringIO()
    call_command("definitions", "sync", str(folder), *args, stdout=out)
    return out.getvalue()


@pytest.fixture
def folder(tmp_path) -> Path:
    """The demo example plus a file using every other kind (and options off their defaults)."""
    target = tmp_path / "defs"
    shutil.copytree(EXAMPLE, target)
    (target / "more" / "extra.yml").parent.mkdir()
    (target / "more" / "extra.yml").write_text(EXTRA)
    return target


def audit_count() -> int:
    return AuditEvent.objects.count()


def test_sync_into_an_empty_service_creates_everything_once_and_audits_its_source(folder):
    dry = sync(folder, "--dry-run")
    assert "create    task demo-fetch  (demo.yaml)" in dry and "Plan: 11 to create" in dry
    assert not TaskDefinition.objects.exists() and audit_count() == 0

    out = sync(folder, "--source", "git:abc123")
    assert "Applied: 11 to create, 0 to update, 0 to delete, 0 unchanged." in out
    assert Dag.objects.get(pk="nightly").tasks == [
        {"id": "extra", "parameters": {"N": "4"}},
        {"id": "demo-report", "parameters": {}},
    ]
    assert TaskDefinition.objects.get(pk="extra").parameters == {"N": "3"}  # numbers kept as text
    assert Context.objects.get(pk="prod").extends == "base" and Pool.objects.get(pk="small").slots == 2
    schedule = Schedule.objects.get(pk="nightly-at-two")
    assert schedule.paused and schedule.timezone == "Europe/Berlin"
    assert set(DefinitionVersion.objects.values_list("version", flat=True)) == {1}
    event = AuditEvent.objects.get(action="definitions.synced")
    assert event.changes["source"] == "git:abc123"
    assert {"kind": "dag", "id": "nightly", "action": "create", "file": "more/extra.yml#5"} in event.changes[
        "changes"
    ]
    assert AuditEvent.objects.filter(action="task.created").count() == 5  # the services' own events too

    # Unchanged: no version, no audit row.
    versions, events = DefinitionVersion.objects.count(), audit_count()
    assert "Applied: 0 to create, 0 to update, 0 to delete, 11 unchanged." in sync(folder)
    assert DefinitionVersion.objects.count() == versions and audit_count() == events


def test_a_changed_field_is_one_update_with_its_diff_and_one_new_version(folder):
    sync(folder)
    demo = folder / "demo.yaml"
    demo.write_text(demo.read_text().replace("echo checking; sleep 2", "echo checking twice"))
    dry = sync(folder, "--dry-run")
    assert "update    task demo-check  (demo.yaml#3)" in dry
    assert (
        '    command: "echo checking; sleep 2; echo all good" -> "echo checking twice; echo all good"' in dry
    )
    assert TaskDefinition.objects.get(pk="demo-check").version == 1

    events = audit_count()
    out = sync(folder)
    assert "Applied: 0 to create, 1 to update, 0 to delete, 10 unchanged." in out
    assert TaskDefinition.objects.get(pk="demo-check").version == 2
    assert TaskDefinition.objects.get(pk="demo-fetch").version == 1
    assert audit_count() == events + 2  # task.updated and definitions.synced


def test_prune_deletes_what_no_file_defines_dependents_first(folder):
    sync(folder)
    shutil.rmtree(folder / "more")
    assert "Applied: 0 to create, 0 to update, 0 to delete" in sync(folder)  # no --prune: kept
    assert TaskDefinition.objects.filter(pk="extra").exists()

    dry = sync(folder, "--prune", "--dry-run")
    assert "delete    schedule nightly-at-two" in dry and "delete    task extra" in dry
    assert Schedule.objects.filter(pk="nightly-at-two").exists()
    assert "Applied: 0 to create, 0 to update, 3 to delete, 5 unchanged." in sync(folder, "--prune")
    assert not Schedule.objects.exists() and set(Dag.objects.values_list("id", flat=True)) == {"demo"}
    assert not TaskDefinition.objects.filter(pk="extra").exists()
    # Contexts and pools are never pruned (neither has a delete).
    assert Context.objects.count() == 2 and Pool.objects.count() == 1


def test_an_invalid_file_applies_nothing_and_names_the_file_and_field(folder):
    (folder / "broken.yaml").write_text("kind: task\nid: broken\ncommand: 5\nqueue: [x]\n")
    with pytest.raises(CommandError) as raised:
        sync(folder)
    assert "broken.yaml:command: must be a string" in str(raised.value)
    assert "broken.yaml:queue: must be a string" in str(raised.value)
    assert raised.value.returncode == 1  # a conflict would be 3
    assert not TaskDefinition.objects.exists() and audit_count() == 0

    # A reference only the service can check (a task depending on one nobody defines).
    (folder / "broken.yaml").write_text("kind: task\nid: broken\ncommand: 'true'\ndependencies: [ghost]\n")
    with pytest.raises(CommandError) as raised:
        sync(folder)
    assert "broken.yaml:dependencies: unknown task(s): ghost" in str(raised.value)
    assert not TaskDefinition.objects.exists() and audit_count() == 0

    # YAML that means more than JSON: aliases (unbounded expansion), dates.
    (folder / "broken.yaml").write_text("kind: task\nid: a\ncommand: &c 'true'\ndescription: *c\n")
    with pytest.raises(
        CommandError, match=r"broken.yaml: not valid YAML \(aliases \(\*name\) are not allowed"
    ):
        sync(folder)
    (folder / "broken.yaml").write_text("kind: task\nid: a\ncommand: 'true'\ndescription: 2026-01-01\n")
    sync(folder, "--dry-run")  # a date is the text the API reads
    (folder / "broken.yaml").write_text("kind: task\nid: a\ncommand: 'true'\ndescription: !!binary aGk=\n")
    with pytest.raises(CommandError, match=r"broken.yaml: only JSON values"):
        sync(folder)

    (folder / "broken.yaml").write_text("kind: widget\nid: x\n")
    with pytest.raises(CommandError, match=r"broken.yaml:kind: kind must be one of pool, context"):
        sync(folder)
    (folder / "broken.yaml").write_text("kind: task\nid: demo-fetch\ncommand: 'true'\n")
    with pytest.raises(CommandError, match=r"demo.yaml:id: task demo-fetch is also defined in broken.yaml"):
        sync(folder)


def test_export_then_sync_changes_nothing(folder, tmp_path):
    sync(folder)
    exported = tmp_path / "exported"
    out = io.StringIO()
    call_command("definitions", "export", str(exported), stdout=out)
    assert sorted(p.name for p in exported.iterdir()) == [
        "contexts.yaml", "dags.yaml", "pools.yaml", "schedules.yaml", "tasks.yaml",
    ]  # fmt: skip
    assert "kind: task\nid: demo-count\n" in (exported / "tasks.yaml").read_text()
    events = audit_count()
    assert "0 to create, 0 to update, 0 to delete, 11 unchanged." in sync(exported, "--prune")
    assert audit_count() == events


@pytest.mark.django_db(transaction=True)
def test_of_two_concurrent_syncs_one_wins_and_the_other_reports_the_conflict(tmp_path):
    first, second = tmp_path / "a", tmp_path / "b"
    for target, command in ((first, "echo a"), (second, "echo b")):
        target.mkdir()
        (target / "t.yaml").write_text(f"kind: task\nid: raced\ncommand: {command}\n")
    plans = [sync_plan(read_documents(f)) for f in (first, second)]  # both from the same state
    outcomes: list[str] = []
    barrier = threading.Barrier(2)

    def apply(plan) -> None:
        barrier.wait()
        try:
            sync_apply(plan)
            outcomes.append("applied")
        except VersionConflict as exc:
            outcomes.append(exc.code)
        finally:
            close_old_connections()

    threads = [threading.Thread(target=apply, args=(plan,)) for plan in plans]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(outcomes) == ["applied", "version_conflict"]
    assert TaskDefinition.objects.get(pk="raced").version == 1


@pytest.fixture
def roles(settings):
    settings.ORCH_SECURITY_ENABLED = True
    return {role: api_key_headers(role) for role in ("viewer", "operator", "admin")}


def plan_body(folder: Path, prune: bool = False) -> dict:
    files = [
        {"name": str(p.relative_to(folder)), "content": p.read_text()} for p in sorted(folder.rglob("*.y*ml"))
    ]
    return {"files": files, "prune": prune}


def test_the_plan_route_is_a_dry_run_for_admins_only(api, roles, folder):
    body = plan_body(folder)
    response = api.post("/api/definitions/plan", body, format="json", **roles["admin"])
    assert response.status_code == 200, response.content
    plan = response.json()
    assert plan["applied"] is False and plan["summary"] == {
        "create": 11,
        "update": 0,
        "delete": 0,
        "unchanged": 0,
    }
    assert plan["changes"][0] == {
        "kind": "pool", "id": "small", "action": "create", "file": "more/extra.yml", "diff": {
            "slots": {"before": None, "after": 2}},
    }  # fmt: skip
    assert not TaskDefinition.objects.exists() and not Pool.objects.exists()
    assert not AuditEvent.objects.filter(action__startswith="task.").exists()

    body["files"].append({"name": "bad.yaml", "content": "kind: dag\nid: d\ntasks: [nope]\n"})
    assert_error(api.post("/api/definitions/plan", body, format="json", **roles["admin"]), 400,
                 "validation_error", "bad.yaml:tasks")  # fmt: skip
    assert_error(api.post("/api/definitions/plan", body, format="json", **roles["operator"]), 403,
                 "permission_denied")  # fmt: skip
    assert_error(api.post("/api/definitions/plan", body, format="json", **roles["viewer"]), 403,
                 "permission_denied")  # fmt: skip
    assert_error(api.post("/api/definitions/plan", body, format="json"), 401, "not_authenticated")
