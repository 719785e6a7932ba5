"""Which query parameters a service's views read, compared with what its OpenAPI document declares.

Every GET operation of the document is called through Django's test client while each read of a
query parameter by key (`get`, `[]`, `getlist`) is recorded. Each operation is called twice:
with no parameters (every default path) and with every declared parameter set to a value its schema
allows (the paths a set parameter opens), plus one parameter no document declares, which must be
ignored: the same status as without it (docs/decisions.md, API conventions).

Limit: a parameter read only by iterating the whole query string (`items()`, `dict(...)`) is not
seen; the views read theirs by name.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from urllib.parse import urlencode

from django.http import QueryDict

UNDECLARED = "notAParameterOfAnyRoute"


@contextmanager
def recording_reads() -> Iterator[set[str]]:
    """Records every key read from any QueryDict (a GET request has only its query string)."""
    seen: set[str] = set()
    iterating = [0]  # items()/values() read every key through [], which is not a read by name
    originals = {name: getattr(QueryDict, name) for name in ("get", "__getitem__", "getlist")}
    whole = {name: getattr(QueryDict, name) for name in ("items", "values")}

    def recorder(name: str) -> Any:
        original = originals[name]

        def read(self: QueryDict, key: Any, *args: Any, **kwargs: Any) -> Any:
            if isinstance(key, str) and not iterating[0]:
                seen.add(key)
            return original(self, key, *args, **kwargs)

        return read

    def iterator(name: str) -> Any:
        original = whole[name]

        def iterate(self: QueryDict) -> Iterator[Any]:
            iterating[0] += 1
            try:
                yield from original(self)
            finally:
                iterating[0] -= 1

        return iterate

    for name in originals:
        setattr(QueryDict, name, recorder(name))
    for name in whole:
        setattr(QueryDict, name, iterator(name))
    try:
        yield seen
    finally:
        for name in [*originals, *whole]:
            delattr(QueryDict, name)  # back to the inherited MultiValueDict methods


def example_value(schema: dict[str, Any]) -> str:
    """A value the parameter's schema allows (enough to open the code path it guards)."""
    if "anyOf" in schema:  # the first choice, with the keywords beside anyOf
        return example_value({k: v for k, v in schema.items() if k != "anyOf"} | schema["anyOf"][0])
    if "enum" in schema:
        return str(schema["enum"][0])
    if "default" in schema and schema["default"] is not None:
        value = schema["default"]
        return str(value).lower() if isinstance(value, bool) else str(value)
    kind, fmt = schema.get("type"), schema.get("format")
    if kind == "boolean":
        return "true"
    if kind == "integer":
        return str(schema.get("minimum", 1))
    if kind == "array":
        return example_value(schema.get("items", {}))
    if fmt == "uuid":
        return str(uuid.uuid4())
    if fmt == "date-time":
        return "2026-01-01T00:00:00Z"
    if fmt == "date":
        return "2026-01-01"
    return "x"


def fill_path(path: str, values: dict[str, str]) -> str:
    return re.sub(r"\{([^}]+)\}", lambda m: values.get(m.group(1), str(uuid.uuid4())), path)


def undeclared_reads(client: Any, schema: dict[str, Any], *, path_values: dict[str, str]) -> dict[str, Any]:
    """{operation: problem} for every GET operation that reads an undeclared query parameter or
    answers differently when one is added; also returns how many operations were checked."""
    problems: dict[str, Any] = {}
    checked = 0
    for path, item in schema["paths"].items():
        operation = item.get("get")
        if operation is None:
            continue
        checked += 1
        declared = {
            p["name"]: p.get("schema", {}) for p in operation.get("parameters", []) if p["in"] == "query"
        }
        url = fill_path(path, path_values)
        given = urlencode({name: example_value(s) for name, s in declared.items()})
        with recording_reads() as read:
            plain = client.get(url).status_code
            with_undeclared = client.get(f"{url}?{UNDECLARED}=1").status_code
            client.get(f"{url}?{given}")
        extra = sorted(str(k) for k in read - set(declared))
        if extra:
            problems[f"GET {path}"] = f"reads undeclared query parameter(s) {extra}"
        elif plain != with_undeclared:
            problems[f"GET {path}"] = (
                f"an undeclared parameter changed the answer: {plain} -> {with_undeclared}"
            )
    return {"problems": problems, "checked": checked}
