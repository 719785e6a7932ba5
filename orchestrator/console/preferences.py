"""The signed-in user's console preferences: time zone, colour theme and language. They live in
the session (the orchestrator's accounts carry a role only); a new session starts from the
defaults (UTC, the system's colour scheme, the browser's language when it is English or German)."""

from __future__ import annotations

import zoneinfo
from collections.abc import Iterator
from contextlib import contextmanager

from django.http import HttpRequest
from django.utils import timezone, translation
from django.utils.translation import gettext_lazy as _

from shared.web.zones import pickable_zones

SESSION_KEY = "orch_console_preferences"
THEMES = {"system": _("Same as the system"), "light": _("Light"), "dark": _("Dark")}
LANGUAGES = {"en": "English", "de": "Deutsch"}
DEFAULTS = {"timezone": "UTC", "theme": "system", "language": "en"}


def time_zones() -> list[str]:
    """The searchable list's zones (shared.web.zones); any valid zone name is accepted."""
    return pickable_zones()


def preferences_of(request: HttpRequest) -> dict[str, str]:
    stored = request.session.get(SESSION_KEY, {}) if hasattr(request, "session") else {}
    # Until the user chooses, the browser's language (Accept-Language) if the console has it.
    browser = translation.get_language_from_request(request)
    defaults = {**DEFAULTS, "language": browser if browser in LANGUAGES else DEFAULTS["language"]}
    return {**defaults, **{k: v for k, v in stored.items() if k in DEFAULTS}}


def problems(posted: dict[str, str]) -> dict[str, str]:
    """Each refused field with a message a person reads."""
    found = {}
    if posted.get("timezone") not in zoneinfo.available_timezones():
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
