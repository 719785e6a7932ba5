"""Filters the console's templates share: times with their date and the user's zone, human
durations ("2 min 13 s"), and a task run's place on a run's timeline."""

from __future__ import annotations

from datetime import datetime, timedelta

from django import template
from django.utils import timezone
from django.utils.formats import date_format
from django.utils.html import format_html
from django.utils.safestring import SafeString
from django.utils.translation import gettext as _

register = template.Library()


@register.filter
def when(value: datetime | None) -> SafeString | str:
    """A `<time>` with the date, time and zone the user chose (the page's active time zone)."""
    if value is None:
        return "—"
    local = timezone.localtime(value)
    shown = f"{date_format(local, 'Y-m-d H:i:s')} {local.tzname()}"
    return format_html('<time datetime="{}">{}</time>', value.isoformat(), shown)


def human_duration(delta: timedelta) -> str:
    seconds = max(delta.total_seconds(), 0.0)
    if seconds < 1:
        return _("%(ms)d ms") % {"ms": round(seconds * 1000)}
    if seconds < 60:
        return _("%(s).1f s") % {"s": seconds} if seconds < 10 else _("%(s)d s") % {"s": int(seconds)}
    whole = int(seconds)
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return _("%(h)d h %(m)d min") % {"h": hours, "m": minutes}
    return _("%(m)d min %(s)d s") % {"m": minutes, "s": secs}


OPEN = ("pending", "queued", "running", "paused")


@register.simple_tag
def took(item: object) -> str:
    """How long a run or task run took; an open one so far (marked so); "—" before it started."""
    start, end = getattr(item, "start_time", None), getattr(item, "end_time", None)
    if start is None:
        return "—"
    if end is not None:
        return human_duration(end - start)
    if getattr(item, "status", "") in OPEN:
        return _("%(took)s so far") % {"took": human_duration(timezone.now() - start)}
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
        return when(value)
