from __future__ import annotations

from django.apps import AppConfig
from django.contrib.admin import apps as admin_apps


class WebConfig(AppConfig):
    default = True
    name = "shared.web"


class BrandedAdminConfig(admin_apps.AdminConfig):
    """django.contrib.admin with the product's name instead of "Django administration"."""

    default = False  # listed by its full path in INSTALLED_APPS; shared.web itself is WebConfig
    default_site = "shared.web.admin_site.BrandedAdminSite"
