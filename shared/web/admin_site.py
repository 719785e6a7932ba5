"""The admin site both services use: the product's name in the header and, through an optional
per-service hook (`ADMIN_CONTEXT`, a dotted path to `context(request) -> dict`), the signed-in
administrator's own branding: its company name and colours."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib.admin import AdminSite
from django.utils.module_loading import import_string
from django.utils.translation import gettext_lazy


class BrandedAdminSite(AdminSite):
    index_title = gettext_lazy("Administration")

    def each_context(self, request: Any) -> dict[str, Any]:
        context = super().each_context(request)
        product = str(getattr(settings, "PRODUCT_NAME", "Administration"))
        context.update(site_header=product, site_title=product)
        hook = getattr(settings, "ADMIN_CONTEXT", None)
        if hook and getattr(request, "user", None) is not None and request.user.is_authenticated:
            context.update(import_string(hook)(request))
        return context
