"""Finding and replacing a person's identifying text inside JSON values (case data, drafts, step
results, audit payloads). Pure functions: the erasure services decide where they apply."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

ERASED = "[erased]"
# A display name shorter than this ("Al", "Jo") would match inside unrelated words.
MIN_NAME_LENGTH = 3


@dataclass
class Needles:
    """The texts that identify one person: their email address and their display name."""

    texts: list[str]
    pattern: re.Pattern[str] | None = field(init=False)

    def __post_init__(self) -> None:
        texts = sorted(
            {t.strip() for t in self.texts if len(t.strip()) >= MIN_NAME_LENGTH}, key=len, reverse=True
        )
        self.texts = texts
        self.pattern = re.compile("|".join(re.escape(t) for t in texts), re.IGNORECASE) if texts else None

    @classmethod
    def of(cls, *, email: str, display_name: str) -> Needles:
        return cls([email, display_name])

    def found_in(self, text: str) -> bool:
        return bool(self.pattern and self.pattern.search(text))

    def replace(self, text: str) -> str:
        return self.pattern.sub(ERASED, text) if self.pattern else text


def scrub_value(value: Any, needles: Needles, path: str = "") -> tuple[Any, list[str]]:
    """`value` with every occurrence of the needles in its strings (keys included) replaced by
    `[erased]`, and the paths of what changed (`applicant.email`, `items[2]`)."""
    if isinstance(value, str):
        new = needles.replace(value)
        return new, ([path or "$"] if new != value else [])
    if isinstance(value, list):
        out, paths = [], []
        for index, item in enumerate(value):
            new_item, changed = scrub_value(item, needles, f"{path}[{index}]")
            out.append(new_item)
            paths.extend(changed)
        return out, paths
    if isinstance(value, dict):
        result: dict[str, Any] = {}
        paths = []
        for key, item in value.items():
            new_key = needles.replace(key)
            child = f"{path}.{new_key}" if path else new_key
            new_item, changed = scrub_value(item, needles, child)
            result[new_key] = new_item
            paths.extend(changed if new_key == key else [*changed, child])
        return result, paths
    return value, []
