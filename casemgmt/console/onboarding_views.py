"""The page behind the welcome email's one-time link: choose a password, then straight to the
inbox, signed in. (`POST /auth/password/set` is the same step for API clients.)"""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth import login
from django.http import HttpRequest
from django.http.response import HttpResponseBase
from django.shortcuts import redirect
from django.utils.translation import gettext as _
from django.views.decorators.http import require_http_methods

from casemgmt.accounts.models import User
from casemgmt.accounts.services import password_set
from casemgmt.console.views import page
from shared.api import errors
from shared.auth.permissions import has_all


@require_http_methods(["GET", "POST"])
def password_set_page(request: HttpRequest) -> HttpResponseBase:
    token = (request.POST.get("token") or request.GET.get("token") or "")[:500]
    if request.method == "GET":
        return page(request, "console/password_set.html", {"token": token})
    password = request.POST.get("password", "")
    if password != request.POST.get("confirm", ""):
        return page(
            request,
            "console/password_set.html",
            {"token": token, "error": _("The two passwords differ. Type the same password twice.")},
            status=400,
        )
    try:
        user = password_set(token=token, new_password=password)
    except errors.ValidationFailed as exc:  # an expired or used link, a weak password
        return page(request, "console/password_set.html", {"token": token, "error": exc.message}, status=400)
    login(request, user, backend="casemgmt.accounts.backends.EmailBackend")
    messages.success(request, _("Your password is set. Welcome!"))
    return redirect(_landing(user))


def _landing(user: User) -> str:
    """The inbox; for someone who may read cases but no tasks (a viewer), the case list."""
    granted = user.get_permission_strings()
    if any(has_all(granted, [p]) for p in ("tasks:read", "tasks:claim", "tasks:complete")):
        return "console:inbox"
    return "console:cases" if has_all(granted, ["cases:read"]) else "console:inbox"
