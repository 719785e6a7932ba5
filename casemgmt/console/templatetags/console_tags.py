"""Template filters of the console."""

from __future__ import annotations

import re

from django import template
from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

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
