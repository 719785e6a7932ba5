"""Template filters of the console."""

from __future__ import annotations

import re

from django import template
from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe
from django.utils.translation import gettext as _

register = template.Library()

_HIGHLIGHT = re.compile(r"\*\*(.+?)\*\*", re.DOTALL)


@register.filter
def highlight(excerpt: str) -> SafeString:
    """A search excerpt's `**match**` spans as <mark>; everything else escaped first, so nothing
    from the case data ever reaches the page as markup."""
    escaped = str(escape(excerpt or ""))
    return mark_safe(_HIGHLIGHT.sub(lambda m: f"<mark>{m.group(1)}</mark>", escaped))  # noqa: S308


@register.filter
def get_item(mapping: object, key: str) -> object:
    return mapping.get(key) if isinstance(mapping, dict) else None


@register.filter
def duration(seconds: float | int | None) -> str:
    """A duration as people say it: "2 min 13 s", "3 h 5 min", "4 d 2 h" (the two largest units)."""
    if seconds is None:
        return "—"
    left = int(round(float(seconds)))
    parts: list[str] = []
    for size, unit in ((86400, _("d")), (3600, _("h")), (60, _("min")), (1, _("s"))):
        if left >= size or (size == 1 and not parts):
            parts.append(f"{left // size} {unit}")
            left %= size
    return " ".join(parts[:2])
