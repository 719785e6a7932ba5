"""Prompt templates: POST creates version 1, PUT appends the next version; nothing is overwritten."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from django.db import IntegrityError, transaction

from casemgmt.audit.services import record
from casemgmt.prompts.models import PromptTemplate
from casemgmt.prompts.selectors import prompt_template_get_or_none
from casemgmt.templating import TemplateError, check_template
from shared.api.errors import AlreadyExists, Conflict, NotFound, ValidationFailed

if TYPE_CHECKING:
    from casemgmt.accounts.models import User

NAME_RE = re.compile(r"^[A-Za-z][A-Za-z0-9_.-]{0,99}$")


def prompt_template_check(name: str, template: str) -> None:
    """The checks every stored version passes (also run by the admin form, to show them per field)."""
    errors = []
    if not NAME_RE.match(name):
        errors.append(
            {"field": "name", "error": "must be a letter followed by up to 99 of A-Z a-z 0-9 _ . -"}
        )
    try:
        check_template(template)
    except TemplateError as exc:
        errors.append({"field": "template", "error": f"does not parse: {exc}"})
    if errors:
        raise ValidationFailed.from_errors(errors)


def _fields(
    template: str, description: str, model: str, temperature: float | None, max_tokens: int | None
) -> dict[str, Any]:
    return {
        "template": template,
        "description": description,
        "model": model,
        "temperature": temperature,
        "max_tokens": max_tokens,
    }


def _save(user: User, name: str, version: int, fields: dict[str, Any]) -> PromptTemplate:
    template = PromptTemplate.objects.create(
        tenant_id=user.member_tenant_id, name=name, version=version, created_by=user, **fields
    )
    # Decision: prompt templates are audited as prompt_template:created / prompt_template:versioned.
    record(
        tenant_id=user.member_tenant_id,
        actor=str(user.id),
        action="prompt_template:created" if version == 1 else "prompt_template:versioned",
        resource=f"prompt-templates/{name}",
        changes={"version": version},
    )
    return template


def prompt_template_create(
    *,
    user: User,
    name: str,
    template: str,
    description: str = "",
    model: str = "",
    temperature: float | None = None,
    max_tokens: int | None = None,
) -> PromptTemplate:
    prompt_template_check(name, template)
    fields = _fields(template, description, model, temperature, max_tokens)
    if prompt_template_get_or_none(tenant_id=user.member_tenant_id, name=name):
        raise AlreadyExists(
            f"Prompt template {name!r} already exists; PUT creates a new version.", field="name"
        )
    try:
        with transaction.atomic():
            return _save(user, name, 1, fields)
    except IntegrityError:
        raise AlreadyExists(f"Prompt template {name!r} already exists.", field="name") from None


def prompt_template_new_version(
    *,
    user: User,
    name: str,
    template: str,
    description: str = "",
    model: str = "",
    temperature: float | None = None,
    max_tokens: int | None = None,
) -> PromptTemplate:
    prompt_template_check(name, template)
    fields = _fields(template, description, model, temperature, max_tokens)
    for _ in range(5):  # a concurrent PUT may take the next number first; then take the one after
        latest = prompt_template_get_or_none(tenant_id=user.member_tenant_id, name=name)
        if latest is None:
            raise NotFound("Prompt template not found.")
        try:
            with transaction.atomic():
                return _save(user, name, latest.version + 1, fields)
        except IntegrityError:
            continue
    raise Conflict("Could not allocate a version; retry.", code="version_conflict")
