"""The orchestrator console's own template tags, beside the design system's (`design`: when,
duration, badge, icon): how long a run or task run took (so far), a time in a given zone."""

from __future__ import annotations

from datetime import datetime

from django import template
from django.utils import timezone
from django.utils.safestring import SafeString
from django.utils.translation import gettext as _

from shared.web.templatetags.design import duration, when

register = template.Library()


OPEN = ("pending", "queued", "running", "paused")


@register.simple_tag
def took(item: object) -> str:
    """How long a run or task run took; an open one so far (marked so); "—" before it started."""
    start, end = getattr(item, "start_time", None), getattr(item, "end_time", None)
    if start is None:
        return "—"
    if end is not None:
        return duration(end - start)
    if getattr(item, "status", "") in OPEN:
        return _("%(took)s so far") % {"took": duration(timezone.now() - start)}
    return "—"


@register.filter
def split(text: str) -> list[str]:
    return text.split()


@register.filter
def in_zone(value: datetime, zone_name: str) -> SafeString | str:
    """`when` in a given zone (a schedule's own) rather than the user's."""
    if value is None:
        return "—"
    with timezone.override(zone_name):
        return when(value)  # the design system's, in that zone
