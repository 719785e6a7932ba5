"""The tenant's branding and terminology and the user's theme and locale, as every console page
shows them."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from django.utils.translation import gettext, gettext_lazy, gettext_noop

from casemgmt.accounts.selectors import preferences_of
from casemgmt.tenancy.models import DEFAULT_TERMINOLOGY, Branding, Theme
from casemgmt.tenancy.selectors import terminology_of
from shared.auth.permissions import has_all

if TYPE_CHECKING:
    from casemgmt.accounts.models import User

# Only plain custom properties reach the page's <style>: a value could otherwise close the rule
# and inject CSS of its own.
_NAME = re.compile(r"^--[A-Za-z0-9-]{1,64}$")
_VALUE = re.compile(r"^[^;{}<>\\]{1,200}$")
_HEX = re.compile(r"^#([0-9a-fA-F]{6})$")

# The default terminology, for the translation catalogue: a tenant's own words are shown as written.
_TERMS = [
    gettext_noop("Case"),
    gettext_noop("Cases"),
    gettext_noop("Task"),
    gettext_noop("Tasks"),
    gettext_noop("Step"),
    gettext_noop("Steps"),
    gettext_noop("Inbox"),
]

ANONYMOUS = {
    "company": gettext_lazy("Case service"),
    "css_variables": [],
    "colour_scheme": "auto",
    "language": "en",
}


def _css_variables(pairs: dict[str, Any]) -> list[tuple[str, str]]:
    return [(k, str(v)) for k, v in pairs.items() if _NAME.match(str(k)) and _VALUE.match(str(v))]


def colour_scheme(variables: dict[str, Any]) -> str:
    """ "dark" when the theme's background is dark: the page then uses light error and success
    colours and dark form controls, so their contrast holds on it."""
    match = _HEX.match(str(variables.get("--color-bg", "")))
    if not match:
        return "light"
    red, green, blue = (int(match.group(1)[i : i + 2], 16) for i in (0, 2, 4))
    return "dark" if 0.2126 * red + 0.7152 * green + 0.0722 * blue < 128 else "light"


def _translated(terms: dict[str, str]) -> dict[str, str]:
    """The default words in the page's language; words the tenant chose stay as they are."""
    return {
        key: gettext(label) if label == DEFAULT_TERMINOLOGY.get(key) else label
        for key, label in terms.items()
    }


def _scheme(user: User, tenant_id: Any, theme_variables: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """A theme the user chose is kept as it is. Until they choose, a light default follows the
    device: on a device set to dark, the tenant's first dark theme (if it has one) applies instead."""
    scheme = colour_scheme(theme_variables)
    if "theme" in (user.preferences or {}) or scheme == "dark":
        return scheme, {}
    for variables in Theme.objects.filter(tenant_id=tenant_id).values_list("css_variables", flat=True):
        if colour_scheme(variables) == "dark":
            return "auto", variables
    return scheme, {}


def page_context(user: User | None) -> dict[str, Any]:
    tenant_id = getattr(user, "tenant_id", None)
    if user is None or tenant_id is None:
        return {**ANONYMOUS, "terms": _translated(DEFAULT_TERMINOLOGY)}
    preferences = preferences_of(user)
    branding = Branding.objects.filter(tenant_id=tenant_id).first()
    # The user's chosen theme (preferences fall back to the tenant default when it is gone).
    theme = Theme.objects.filter(tenant_id=tenant_id, name=preferences["theme"]).first()
    theme_variables = theme.css_variables if theme else {}
    colours = {f"--brand-{k}": v for k, v in (branding.colors if branding else {}).items()}
    scheme, dark_variables = _scheme(user, tenant_id, theme_variables)
    return {
        "company": branding.company_name if branding else gettext("Case service"),
        "css_variables": _css_variables(colours) + _css_variables(theme_variables),
        "css_dark_variables": _css_variables(dark_variables),
        "colour_scheme": scheme,
        "language": preferences["language"],
        "terms": _translated(terminology_of(tenant_id=tenant_id)),
        "can_dashboard": has_all(user.get_permission_strings(), ["cases:read", "reports:read"]),
        "can_create_case": has_all(user.get_permission_strings(), ["cases:create"]),
    }
