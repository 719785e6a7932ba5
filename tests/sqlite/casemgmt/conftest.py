"""The case service's fixtures (tenants, users, clients, case types, cases through real services),
shared with the PostgreSQL suite."""

from tests.casemgmt.cases.conftest import case_type, make_case, outsider, reader  # noqa: F401
from tests.casemgmt.conftest import admin_user, api, make_user, other_tenant, tenant  # noqa: F401
from tests.casemgmt.vault.conftest import owner, upload  # noqa: F401
