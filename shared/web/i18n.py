"""Browser pages (the consoles, the admin site) in the reader's language and time zone.

The language is the signed-in user's stored choice when the service keeps one (`USER_LOCALE`, a
dotted path to `locale_of(user) -> (language | None, zone | None)`), else Django's choice from the
language cookie and the browser's Accept-Language. Only paths under `LOCALE_PATH_PREFIXES` are
touched: the JSON APIs keep one language (English) whatever the caller's browser says. Both are
switched back after the response, so a thread that serves an API request next does not inherit them.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.utils import timezone, translation
from django.utils.cache import patch_vary_headers
from django.utils.deprecation import MiddlewareMixin
from django.utils.module_loading import import_string

DEFAULT_PREFIXES = ("/console/", "/admin/")


def _stored_locale(request: HttpRequest) -> tuple[str | None, str | None]:
    hook = getattr(settings, "USER_LOCALE", None)
    user: Any = getattr(request, "user", None)
    if not hook or user is None or not user.is_authenticated:
        return None, None
    result: tuple[str | None, str | None] = import_string(hook)(user)
    return result


def _supported(language: str | None) -> str | None:
    if not language:
        return None
    try:
        return translation.get_supported_language_variant(language)
    except LookupError:  # a language the service has no translation for: the browser's choice
        return None


class PreferredLocaleMiddleware(MiddlewareMixin):
    """After the session and authentication middlewares (it reads `request.user`)."""

    def process_request(self, request: HttpRequest) -> None:
        prefixes = tuple(getattr(settings, "LOCALE_PATH_PREFIXES", DEFAULT_PREFIXES))
        if not request.path_info.startswith(prefixes):
            return
        language, zone = _stored_locale(request)
        translation.activate(_supported(language) or translation.get_language_from_request(request))
        request.LANGUAGE_CODE = translation.get_language()
        if zone:
            try:
                timezone.activate(zone)
            except (ValueError, LookupError):  # a zone this machine's tz database lacks: UTC
                timezone.deactivate()
        request._locale_switched = True  # type: ignore[attr-defined]

    def process_response(self, request: HttpRequest, response: HttpResponse) -> HttpResponse:
        if getattr(request, "_locale_switched", False):
            patch_vary_headers(response, ("Accept-Language", "Cookie"))
            response.headers.setdefault("Content-Language", translation.get_language())
            translation.deactivate()
            timezone.deactivate()
        return response
