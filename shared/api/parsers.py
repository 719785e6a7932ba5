"""A JSON parser whose failures are our 400 error body rather than DRF's generic message."""

from __future__ import annotations

import json
import math
import re
from typing import Any

from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser

# Deeper documents are refused: nothing in either API nests this far, and unbounded depth would
# exhaust the interpreter's recursion in validators and serializers further down.
MAX_DEPTH = 64

# json.loads joins an escaped surrogate pair into one character, so any surrogate code point left in
# a string stood alone: it is not Unicode text, cannot be encoded as UTF-8 and PostgreSQL refuses it.
_SURROGATE = re.compile("[\ud800-\udfff]")


class StrictJSONParser(JSONParser):
    """The parser of every JSON body in both services. Besides malformed JSON it refuses values the
    database or the audit hash cannot hold: NUL characters, lone surrogates, numbers beyond a float."""

    def parse(self, stream: Any, media_type: str | None = None, parser_context: Any = None) -> Any:
        raw = stream.read() if stream is not None else b""
        if not raw.strip():
            return {}
        try:
            value = json.loads(raw.decode("utf-8"), parse_constant=_refuse_constant, parse_float=_finite)
        except (ValueError, UnicodeDecodeError) as exc:
            raise ParseError(f"JSON parse error - {exc}") from None
        except RecursionError:
            raise ParseError(f"JSON parse error - nested deeper than {MAX_DEPTH} levels") from None
        _check(value, 0)
        return value


def _refuse_constant(name: str) -> float:
    raise ValueError(f"{name} is not valid JSON")


def _finite(text: str) -> float:
    value = float(text)
    if math.isinf(value):  # e.g. 1e400: JSON has no infinity and the database cannot store one
        raise ValueError(f"number {text[:40]} is too large")
    return value


def _check(value: Any, depth: int) -> None:
    if depth > MAX_DEPTH:
        raise ParseError(f"JSON parse error - nested deeper than {MAX_DEPTH} levels")
    if isinstance(value, str):
        if "\x00" in value:
            # PostgreSQL text cannot hold NUL: refuse it here rather than fail at the database.
            raise ParseError("strings must not contain the NUL character (\\u0000)")
        if _SURROGATE.search(value):
            raise ParseError("strings must not contain a lone surrogate (\\ud800-\\udfff): not valid Unicode")
    elif isinstance(value, dict):
        for key, item in value.items():
            _check(key, depth + 1)
            _check(item, depth + 1)
    elif isinstance(value, list):
        for item in value:
            _check(item, depth + 1)
