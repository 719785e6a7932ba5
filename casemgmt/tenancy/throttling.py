"""Per-tenant rate limits on expensive endpoints (search, exports, report queries).

One budget per tenant and scope, shared by all its principals, counted in the cache (Redis in
production, so every web process counts together). Over budget: 429 `rate_limited` with
`Retry-After`. Rates come from settings (`CASE_THROTTLE_*`, e.g. `60/min`; empty: no limit).
Throttles run after authentication and permissions, so anonymous and unauthorised callers still
get their 401/403. If the cache is down the request is let through: a limit on cost is not worth
refusing service over (the outage itself is answered elsewhere).
"""

from __future__ import annotations

import logging
from typing import Any, cast

from redis.exceptions import RedisError
from rest_framework.settings import api_settings
from rest_framework.throttling import SimpleRateThrottle

logger = logging.getLogger(__name__)


class TenantRateThrottle(SimpleRateThrottle):
    """Keyed by the caller's tenant; `scope` names the rate in DEFAULT_THROTTLE_RATES."""

    def get_rate(self) -> str | None:
        # Read at each request (DRF copies the rates once, at import), so changed settings apply.
        # The rates are "N/period" strings (the settings stubs type them as numbers).
        return cast("str | None", api_settings.DEFAULT_THROTTLE_RATES.get(self.scope or ""))

    def get_cache_key(self, request: Any, view: Any) -> str | None:
        tenant_id = getattr(request.user, "tenant_id", None)
        if tenant_id is None:
            return None  # not a tenant principal: nothing to count
        return f"throttle:{self.scope}:{tenant_id}"

    def allow_request(self, request: Any, view: Any) -> bool:
        if self.rate is None:
            return True
        try:
            return super().allow_request(request, view)
        except (RedisError, OSError) as exc:
            logger.warning("rate limit not checked, cache unavailable: %s", exc)
            return True


class SearchThrottle(TenantRateThrottle):
    scope = "tenant-search"


class ExportThrottle(TenantRateThrottle):
    scope = "tenant-export"


class ReportQueryThrottle(TenantRateThrottle):
    scope = "tenant-report-query"
