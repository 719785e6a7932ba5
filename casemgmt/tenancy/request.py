"""The request type of the API views of the apps below accounts (tenancy, audit).

They cannot name the user model (accounts sits above them), so the signed-in user is typed by what
these views use of it. At run time it is DRF's `Request` and the user is `accounts.User`; the
narrower type only tells mypy that `RequiredPermission` already refused anonymous callers."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from rest_framework.request import Request

if TYPE_CHECKING:
    from uuid import UUID

    from casemgmt.tenancy.models import Tenant

    class TenantMember(Protocol):
        @property
        def id(self) -> Any: ...

        @property
        def member_tenant_id(self) -> UUID: ...

        @property
        def member_tenant(self) -> Tenant: ...

        def get_permission_strings(self) -> set[str]: ...

    class MemberRequest(Request):
        # Narrower than DRF's `User | AnonymousUser`, and by protocol: the user model is out of reach.
        @property  # type: ignore[override]
        def user(self) -> TenantMember: ...

        @user.setter
        def user(self, value: TenantMember) -> None: ...

else:
    MemberRequest = Request  # the same object at run time: only the type is narrower
