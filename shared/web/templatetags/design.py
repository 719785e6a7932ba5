"""Template tags of the design system both consoles share: icons, status badges, and times and
durations in the user's language and zone (`{% load design %}`)."""

from __future__ import annotations

from datetime import datetime, timedelta

from django import template
from django.templatetags.static import static
from django.utils import formats, timezone
from django.utils.html import format_html
from django.utils.safestring import SafeString
from django.utils.translation import get_language, gettext, ngettext, pgettext_lazy

register = template.Library()

# Every state either service shows. A badge always says its state in words (colour repeats it).
STATUS_LABELS = {
    "active": pgettext_lazy("status", "Active"),
    "pending": pgettext_lazy("status", "Pending"),
    "completed": pgettext_lazy("status", "Completed"),
    "skipped": pgettext_lazy("status", "Skipped"),
    "failed": pgettext_lazy("status", "Failed"),
    "closed": pgettext_lazy("status", "Closed"),
    "cancelled": pgettext_lazy("status", "Cancelled"),
    "draft": pgettext_lazy("status", "Draft"),
    "published": pgettext_lazy("status", "Published"),
    "withdrawn": pgettext_lazy("status", "Withdrawn"),
    "claimed": pgettext_lazy("status", "Claimed"),
    "unclaimed": pgettext_lazy("status", "Unclaimed"),
    "escalated": pgettext_lazy("status", "Escalated"),
    "overdue": pgettext_lazy("status", "Overdue"),
    "queued": pgettext_lazy("status", "Queued"),
    "running": pgettext_lazy("status", "Running"),
    "paused": pgettext_lazy("status", "Paused"),
    "defined": pgettext_lazy("status", "Defined"),
    "scheduled": pgettext_lazy("status", "Scheduled"),
}


@register.simple_tag
def icon(name: str, label: str = "") -> SafeString:
    """An icon from shared_web/icons.svg. Decorative unless `label` names it for screen readers."""
    href = f"{static('shared_web/icons.svg')}#{name}"
    if label:
        return format_html(
            '<svg class="icon" role="img" aria-label="{}" focusable="false"><use href="{}"></use></svg>',
            label,
            href,
        )
    return format_html(
        '<svg class="icon" aria-hidden="true" focusable="false"><use href="{}"></use></svg>', href
    )


@register.filter
def status_label(value: object) -> str:
    key = str(value or "")
    return str(STATUS_LABELS.get(key.lower(), key.replace("_", " ").capitalize()))


@register.simple_tag
def badge(value: object, extra: str = "") -> SafeString:
    """`<span class="badge status-completed">Completed</span>`, in the page's language."""
    key = str(value or "").lower()
    classes = f"badge status-{key}" + (f" {extra}" if extra else "")
    return format_html('<span class="{}">{}</span>', classes, status_label(key))


@register.filter
def when(value: datetime | None, style: str = "datetime") -> SafeString | str:
    """A moment in the user's zone and language, naming the zone: `27.11.2026 16:43 CET`
    (`style` "time" for the time of day only). `—` when there is none."""
    if not value:
        return "—"
    local = timezone.localtime(value) if timezone.is_aware(value) else value
    shown = formats.date_format(local, "TIME_FORMAT" if style == "time" else "SHORT_DATETIME_FORMAT")
    return format_html(
        '<time datetime="{}">{} <span class="zone">{}</span></time>',
        value.isoformat(),
        shown,
        local.tzname() or "",
    )


@register.filter
def duration(value: float | int | timedelta | None) -> str:
    """Human durations: "2 min 13 s", "3 h 5 min", "4 days 2 h" (in the page's language)."""
    if value is None or value == "":
        return "—"
    seconds = int(value.total_seconds() if isinstance(value, timedelta) else float(value))
    days, rest = divmod(max(seconds, 0), 86400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    if days:
        return ngettext("%(d)s day %(h)s h", "%(d)s days %(h)s h", days) % {"d": days, "h": hours}
    if hours:
        return gettext("%(h)s h %(m)s min") % {"h": hours, "m": minutes}
    if minutes:
        return gettext("%(m)s min %(s)s s") % {"m": minutes, "s": secs}
    return gettext("%(s)s s") % {"s": secs}


@register.simple_tag
def current_zone() -> str:
    return timezone.get_current_timezone_name()


# Languages that write nouns with a capital letter wherever they stand.
_CAPITALISED_NOUNS = ("de",)


@register.filter
def in_sentence(term: object) -> str:
    """A label ("Cases") as it reads inside a sentence: lower case in English ("No cases match."),
    as written in German, which capitalises nouns ("Keine passenden Fälle.")."""
    language = (get_language() or "en").split("-")[0]
    return str(term) if language in _CAPITALISED_NOUNS else str(term).lower()
