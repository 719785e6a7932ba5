"""Checks of an OpenAPI document as people read it, shared by both services' document tests."""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

# camelCase, a verb first: `listCases`, `scheduleTask`; not drf-spectacular's `cases_retrieve`.
HUMAN_ID = re.compile(r"^[a-z]+(?:[A-Z][a-z0-9]*)+$|^[a-z]+$")
METHODS = {"get", "put", "post", "patch", "delete"}


def operations(document: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    return [
        (method, path, operation)
        for path, item in document["paths"].items()
        for method, operation in item.items()
        if method in METHODS
    ]


def assert_operation_ids_human_and_unique(document: dict[str, Any]) -> None:
    ids = Counter(operation["operationId"] for _, _, operation in operations(document))
    assert [name for name, count in ids.items() if count > 1] == []
    inhuman = sorted(name for name in ids if not HUMAN_ID.match(name))
    assert inhuman == [], inhuman


def assert_tagged_by_declared_resources(document: dict[str, Any]) -> None:
    declared = {tag["name"]: tag.get("description", "") for tag in document.get("tags", [])}
    assert declared and all(declared.values()), "every tag is declared with a description"
    for method, path, operation in operations(document):
        assert len(operation.get("tags", [])) == 1, (method, path, operation.get("tags"))
        assert operation["tags"][0] in declared, (method, path, operation["tags"])
    used = {operation["tags"][0] for _, _, operation in operations(document)}
    assert used == set(declared), set(declared) ^ used  # no tag without an operation


def assert_introduction(document: dict[str, Any], *, must_mention: list[str]) -> None:
    description = document["info"].get("description", "")
    for heading in ("## Authentication", "## Errors", "## Paging", "## Rate limits"):
        assert heading in description
    for text in ["curl ", '"error": true', "limit", "offset", "429", "Retry-After", *must_mention]:
        assert text in description, text


def operation_named(document: dict[str, Any], operation_id: str) -> tuple[str, str, dict[str, Any]]:
    found = [op for op in operations(document) if op[2]["operationId"] == operation_id]
    assert len(found) == 1, operation_id
    return found[0]
