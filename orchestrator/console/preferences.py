"""The signed-in user's console preferences: time zone, colour theme and language. They live in
the session (the orchestrator's accounts carry a role only); a new session starts from the
defaults (UTC, the system's colour scheme, English)."""

from __future__ import annotations

import zoneinfo
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache

from django.http import HttpRequest
from django.utils import timezone, translation
from django.utils.translation import gettext_lazy as _

SESSION_KEY = "orch_console_preferences"
THEMES = {"system": _("Same as the system"), "light": _("Light"), "dark": _("Dark")}
LANGUAGES = {"en": "English", "de": "Deutsch"}
DEFAULTS = {"timezone": "UTC", "theme": "system", "language": "en"}


@cache
def time_zones() -> list[str]:
    return sorted(zoneinfo.available_timezones())


def preferences_of(request: HttpRequest) -> dict[str, str]:
    stored = request.session.get(SESSION_KEY, {}) if hasattr(request, "session") else {}
    return {**DEFAULTS, **{k: v for k, v in stored.items() if k in DEFAULTS}}


def problems(posted: dict[str, str]) -> dict[str, str]:
    """Each refused field with a message a person reads."""
    found = {}
    if posted.get("timezone") not in time_zones():
        found["timezone"] = str(_("Choose a time zone from the list, for example Europe/Berlin."))
    if posted.get("theme") not in THEMES:
        found["theme"] = str(_("Choose one of the themes in the list."))
    if posted.get("language") not in LANGUAGES:
        found["language"] = str(_("Choose one of the languages in the list."))
    return found


def save(request: HttpRequest, posted: dict[str, str]) -> None:
    request.session[SESSION_KEY] = {k: posted[k] for k in DEFAULTS}


@contextmanager
def applied(request: HttpRequest) -> Iterator[dict[str, str]]:
    """The page renders in the user's language and time zone."""
    chosen = preferences_of(request)
    language = chosen["language"] if chosen["language"] in LANGUAGES else "en"
    with translation.override(language), timezone.override(chosen["timezone"]):
        yield {**chosen, "language": language}
