"""Reads of prompt templates."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.db.models import Count, Max, Min

from casemgmt.prompts.models import PromptTemplate
from shared.api.errors import NotFound


def prompt_template_get_or_none(
    *, tenant_id: Any, name: str, version: int | None = None
) -> PromptTemplate | None:
    """A given version, or the latest when `version` is None."""
    versions = PromptTemplate.objects.filter(tenant_id=tenant_id, name=name)
    if version is not None:
        return versions.filter(version=version).first()
    return versions.order_by("-version").first()


def prompt_template_get(*, tenant_id: Any, name: str, version: int | None = None) -> PromptTemplate:
    template = prompt_template_get_or_none(tenant_id=tenant_id, name=name, version=version)
    if template is None:
        raise NotFound("Prompt template not found.")
    return template


def prompt_template_latest(*, tenant_id: Any) -> list[tuple[PromptTemplate, Any]]:
    """The latest version of each template, with the first version's createdAt; newest template
    (by that createdAt) first, ties by the latest version's id."""
    stats = (
        PromptTemplate.objects.filter(tenant_id=tenant_id)
        .values("name")
        .annotate(latest=Max("version"), first_created=Min("created_at"), versions=Count("id"))
    )
    firsts = {row["name"]: row for row in stats}
    latest = PromptTemplate.objects.filter(tenant_id=tenant_id, version__in={r["latest"] for r in stats})
    rows = [(t, firsts[t.name]["first_created"]) for t in latest if firsts[t.name]["latest"] == t.version]
    return sorted(rows, key=lambda row: (row[1], str(row[0].id)), reverse=True)


def prompt_template_first_created(*, template: PromptTemplate) -> datetime:
    first = PromptTemplate.objects.filter(tenant_id=template.tenant_id, name=template.name, version=1).first()
    return first.created_at if first else template.created_at


def prompt_template_latest_version(*, template: PromptTemplate) -> int:
    return (
        PromptTemplate.objects.filter(tenant_id=template.tenant_id, name=template.name).aggregate(
            v=Max("version")
        )["v"]
        or template.version
    )
