from django.urls import path

from casemgmt.tenancy import apis

urlpatterns = [
    path("tenant/branding", apis.BrandingApi.as_view(), name="tenant-branding"),
    path("tenant/terminology", apis.TerminologyApi.as_view(), name="tenant-terminology"),
    path("tenant/settings", apis.TenantSettingsApi.as_view(), name="tenant-settings"),
    path("tenant/themes", apis.ThemeListCreateApi.as_view(), name="tenant-themes"),
    path("tenant/themes/<uuid:theme_id>", apis.ThemeDetailApi.as_view(), name="tenant-theme"),
    path("manifest.json", apis.ManifestApi.as_view(), name="manifest"),
]
