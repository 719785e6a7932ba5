"""Definitions as code on the case service: `manage_case.py definitions sync|export --tenant T`
over YAML folders (case types, workflows published on request, prompt templates), validated by the
API's serializers and services, one transaction per sync, audited with its source, per tenant."""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from casemgmt.audit.models import AuditEvent
from casemgmt.cases.models import CaseType
from casemgmt.ops.definitions import sync_apply, sync_plan
from casemgmt.prompts.models import PromptTemplate
from casemgmt.workflows.models import Workflow
from shared.api.errors import VersionConflict
from shared.definitions.files import read_documents

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "casemgmt"
PROMPT = """
kind: prompt_template
name: summarise
template: "Summarise {{ case_data.title }}"
model: small
temperature: 0.2
"""

CONNECTOR = """
kind: connector
key: orchestrator
config:
  url: https://orch.example.test
  apiKey: {env: ORCHESTRATOR_API_KEY}
  webhookSecret: {env: ORCHESTRATOR_WEBHOOK_SECRET}
"""

pytestmark = pytest.mark.django_db


def sync(tenant, folder: Path, *args: str) -> str:
    out = io.StringIO()
    call_command("definitions", "sync", "--tenant", tenant.name, str(folder), *args, stdout=out)
    return out.getvalue()


@pytest.fixture
def folder(tmp_path, monkeypatch) -> Path:
    target = tmp_path / "defs"
    shutil.copytree(EXAMPLE, target)
    (target / "prompts.yaml").write_text(PROMPT)
    (target / "connectors.yaml").write_text(CONNECTOR)
    monkeypatch.setenv("ORCHESTRATOR_API_KEY", "ork_key_value_kept_out_of_files")
    monkeypatch.setenv("ORCHESTRATOR_WEBHOOK_SECRET", "whsec-value-kept-out-of-files")
    return target


def count(folder: Path) -> int:
    """How many definitions the folder holds (the example may grow)."""
    return len(read_documents(folder))


def audit_count(tenant) -> int:
    return AuditEvent.objects.filter(tenant_id=tenant.pk).count()


def test_sync_into_an_empty_tenant_then_again_changes_nothing(tenant, other_tenant, folder):
    events = audit_count(tenant)
    dry = sync(tenant, folder, "--dry-run", "--publish")
    assert (
        "create    case_type insurance_claim  (claim.yaml)" in dry
        and f"Plan: {count(folder)} to create" in dry
    )
    assert "kept_out_of_files" not in dry
    planned = json.loads(sync(tenant, folder, "--dry-run", "--json"))
    assert planned["changes"][-1]["diff"] == {"config": {"before": None, "after": {
        "url": "https://orch.example.test", "apiKey": "***", "webhookSecret": "***"}}}  # fmt: skip
    assert not CaseType.objects.filter(tenant=tenant).exists() and audit_count(tenant) == events

    out = sync(tenant, folder, "--publish", "--source", "git:feed42")
    workflow_file = next(d.where for d in read_documents(folder) if d.kind == "workflow")
    assert f"Applied: {count(folder)} to create, 0 to update, 0 to delete, 0 unchanged." in out
    workflow = Workflow.objects.get(tenant=tenant, case_type_key="insurance_claim")
    assert workflow.status == Workflow.PUBLISHED and workflow.version == 1 and workflow.is_default
    assert CaseType.objects.get(tenant=tenant, key="insurance_claim").prefix == "CLM"
    assert PromptTemplate.objects.get(tenant=tenant, name="summarise").temperature == 0.2
    synced = AuditEvent.objects.get(tenant_id=tenant.pk, action="definitions:synced")
    assert synced.changes["source"] == "git:feed42"
    assert {"kind": "workflow", "id": "insurance_claim", "action": "create", "file": workflow_file} in (
        synced.changes["changes"]
    )
    assert not CaseType.objects.filter(tenant=other_tenant).exists()  # one tenant only

    events = audit_count(tenant)
    assert f"0 to create, 0 to update, 0 to delete, {count(folder)} unchanged." in sync(
        tenant, folder, "--publish"
    )
    assert f"0 to create, 0 to update, 0 to delete, {count(folder)} unchanged." in sync(tenant, folder)
    assert audit_count(tenant) == events and Workflow.objects.filter(tenant=tenant).count() == 1


def test_changes_make_new_versions_and_a_draft_until_published(tenant, folder):
    sync(tenant, folder, "--publish")
    claim = folder / "claim.yaml"
    claim.write_text(claim.read_text().replace("name: Claim handling", "name: Claim handling v2")
                     .replace("displayName: Insurance claim", "displayName: Insurance claims"))  # fmt: skip
    dry = sync(tenant, folder, "--dry-run")
    assert '    displayName: "Insurance claim" -> "Insurance claims"' in dry
    assert (
        '    name: "Claim handling" -> "Claim handling v2"' in dry
        and '    status: "published" -> "draft"' in dry
    )

    assert f"0 to create, 2 to update, 0 to delete, {count(folder) - 2} unchanged." in sync(tenant, folder)
    assert CaseType.objects.filter(tenant=tenant, key="insurance_claim").count() == 2
    draft = Workflow.objects.get(tenant=tenant, version=2)
    assert draft.status == Workflow.DRAFT and draft.name == "Claim handling v2"
    # Publishing the same draft: one update (its status), no new version.
    out = sync(tenant, folder, "--publish")
    assert f"0 to create, 1 to update, 0 to delete, {count(folder) - 1} unchanged." in out
    assert '    status: "draft" -> "published"' in out
    assert [w.status for w in Workflow.objects.filter(tenant=tenant).order_by("version")] == [
        Workflow.PUBLISHED, Workflow.PUBLISHED]  # fmt: skip


def test_connector_secrets_come_from_the_environment_and_never_show(tenant, folder, monkeypatch):
    from casemgmt.connectors.selectors import connector_config_values

    sync(tenant, folder)
    assert connector_config_values(tenant_id=tenant.pk, key="orchestrator")["apiKey"] == (
        "ork_key_value_kept_out_of_files"
    )
    monkeypatch.setenv("ORCHESTRATOR_API_KEY", "ork_rotated_value")
    out = sync(tenant, folder)
    assert "update    connector orchestrator  (connectors.yaml)" in out and '"***" -> "***"' in out
    assert "rotated" not in out
    assert connector_config_values(tenant_id=tenant.pk, key="orchestrator")["apiKey"] == "ork_rotated_value"

    monkeypatch.delenv("ORCHESTRATOR_WEBHOOK_SECRET")
    with pytest.raises(CommandError, match=r"connectors.yaml:config.webhookSecret: environment variable "
                                           r"ORCHESTRATOR_WEBHOOK_SECRET is not set"):  # fmt: skip
        sync(tenant, folder)
    (folder / "connectors.yaml").write_text(CONNECTOR.replace("{env: ORCHESTRATOR_WEBHOOK_SECRET}", "plain"))
    with pytest.raises(CommandError, match=r"connectors.yaml:config.webhookSecret: a secret: give it as"):
        sync(tenant, folder)
    (folder / "connectors.yaml").write_text("kind: connector\nkey: nope\nconfig: {}\n")
    with pytest.raises(CommandError, match=r"connectors.yaml:key: .*nope"):
        sync(tenant, folder)


def test_an_invalid_file_applies_nothing_and_names_the_file_and_field(tenant, folder):
    events = audit_count(tenant)
    (folder / "bad.yaml").write_text("kind: case_type\nkey: Bad Key\ndisplayName: x\nschema: {type: nope}\n")
    with pytest.raises(CommandError, match=r"bad.yaml:key: key must be snake_case"):
        sync(tenant, folder, "--publish")
    (folder / "bad.yaml").write_text("kind: workflow\ncaseTypeKey: nobody\nname: x\nsteps: []\n")
    with pytest.raises(CommandError, match=r"bad.yaml:caseTypeKey: no case type with key 'nobody'"):
        sync(tenant, folder, "--publish")
    (folder / "bad.yaml").write_text("kind: prompt_template\nname: p\ntemplate: '{{ unclosed'\n")
    with pytest.raises(CommandError, match=r"bad.yaml:template: does not parse"):
        sync(tenant, folder)
    assert not CaseType.objects.filter(tenant=tenant).exists() and audit_count(tenant) == events


def test_export_then_sync_changes_nothing(tenant, folder, tmp_path):
    sync(tenant, folder, "--publish")
    exported = tmp_path / "exported"
    call_command("definitions", "export", "--tenant", tenant.name, str(exported), stdout=io.StringIO())
    assert sorted(p.name for p in exported.iterdir()) == [
        "case_types.yaml", "connectors.yaml", "prompt_templates.yaml", "workflows.yaml"]  # fmt: skip
    connectors = (exported / "connectors.yaml").read_text()
    assert "apiKey:\n    env: ORCHESTRATOR_API_KEY" in connectors and "kept_out_of_files" not in connectors
    events = audit_count(tenant)
    assert f"0 to create, 0 to update, 0 to delete, {count(folder)} unchanged." in sync(
        tenant, exported, "--publish"
    )
    assert audit_count(tenant) == events


def test_of_two_syncs_planned_from_one_state_the_second_reports_the_conflict(tenant, tmp_path):
    # The lock taken while applying is the orchestrator's (shared.locks.try_lock_name, raced there
    # with two threads); here: the second plan was made from a state that is no longer stored.
    plans = []
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "p.yaml").write_text(f"kind: prompt_template\nname: raced\ntemplate: {name}\n")
        plans.append(sync_plan(tenant, read_documents(tmp_path / name)))
    sync_apply(plans[0])
    with pytest.raises(VersionConflict, match="changed since this plan was made"):
        sync_apply(plans[1])
    assert [t.template for t in PromptTemplate.objects.filter(tenant=tenant, name="raced")] == ["a"]
