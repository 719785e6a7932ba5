"""The tenant's branding, theme and terminology as every console page shows them."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from casemgmt.tenancy.models import DEFAULT_TERMINOLOGY, Branding, Theme
from casemgmt.tenancy.selectors import terminology_of

if TYPE_CHECKING:
    from casemgmt.accounts.models import User

# Only plain custom properties reach the page's <style>: a value could otherwise close the rule
# and inject CSS of its own.
_NAME = re.compile(r"^--[A-Za-z0-9-]{1,64}$")
_VALUE = re.compile(r"^[^;{}<>\\]{1,200}$")


def _css_variables(pairs: dict[str, Any]) -> list[tuple[str, str]]:
    return [(k, str(v)) for k, v in pairs.items() if _NAME.match(str(k)) and _VALUE.match(str(v))]


def page_context(user: User | None) -> dict[str, Any]:
    tenant_id = getattr(user, "tenant_id", None)
    if tenant_id is None:
        return {"company": "Case service", "css_variables": [], "terms": dict(DEFAULT_TERMINOLOGY)}
    branding = Branding.objects.filter(tenant_id=tenant_id).first()
    theme = Theme.objects.filter(tenant_id=tenant_id, is_default=True).first()
    colours = {f"--brand-{k}": v for k, v in (branding.colors if branding else {}).items()}
    return {
        "company": branding.company_name if branding else "Case service",
        "css_variables": _css_variables(colours) + _css_variables(theme.css_variables if theme else {}),
        "terms": terminology_of(tenant_id=tenant_id),
    }
