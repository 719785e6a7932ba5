from django.conf import settings
from django.urls import include, path

urlpatterns: list = []
if settings.OIDC_ENABLED:
    # /oidc/authenticate/ starts the login, /oidc/callback/ completes it, /oidc/logout/ ends it.
    urlpatterns.append(path("oidc/", include("mozilla_django_oidc.urls")))
