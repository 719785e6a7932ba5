"""The request type of the API views that run behind authentication."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rest_framework.request import Request

if TYPE_CHECKING:
    from casemgmt.accounts.models import User

    class AuthenticatedRequest(Request):
        """DRF types `request.user` as the user or AnonymousUser. A handler whose method is not
        public (`required` does not map it to None) runs only after `RequiredPermission` refused
        anonymous callers with a 401, so its user is a `User`."""

        @property
        def user(self) -> User: ...

        @user.setter
        def user(self, value: User) -> None: ...

        # The bearer token's claims (`TokenAuthentication`); None for a session.
        @property
        def auth(self) -> dict[str, Any] | None: ...

        @auth.setter
        def auth(self, value: dict[str, Any] | None) -> None: ...

else:
    AuthenticatedRequest = Request  # the same object at run time: only the type is narrower
