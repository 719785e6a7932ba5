"""A JSON parser whose failures are the CONTRACT's 400 rather than DRF's generic message."""

from __future__ import annotations

import json
from typing import Any

from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser


class StrictJSONParser(JSONParser):
    def parse(self, stream: Any, media_type: str | None = None, parser_context: Any = None) -> Any:
        raw = stream.read() if stream is not None else b""
        if not raw.strip():
            return {}
        try:
            return json.loads(raw.decode("utf-8"), parse_constant=_refuse_constant)
        except (ValueError, UnicodeDecodeError) as exc:
            raise ParseError(f"JSON parse error - {exc}") from None


def _refuse_constant(name: str) -> float:
    raise ValueError(f"{name} is not valid JSON")
