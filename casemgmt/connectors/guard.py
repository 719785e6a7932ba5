"""SSRF guard for every outbound connector URL.

A target is checked after DNS resolution: every address the name resolves to must be public
(not loopback, private, link-local, unspecified, multicast, reserved or shared address space),
unless the host is listed in CONNECTOR_ALLOWED_HOSTS. Cloud metadata addresses are refused even
when listed. The caller connects to the checked address itself (see `http.py`), so a second
resolution cannot swap in an inner address between check and connect (DNS rebinding).
"""

from __future__ import annotations

from django.conf import settings

from shared import ssrf
from shared.ssrf import METADATA_ADDRESSES, IPAddress, Target, UnsafeTarget, refusal, resolve

__all__ = ["METADATA_ADDRESSES", "Target", "UnsafeTarget", "check_url", "host_allowed", "refusal", "resolve"]


def host_allowed(host: str, ip: IPAddress) -> bool:
    """CONNECTOR_ALLOWED_HOSTS entries are host names (exact, case-insensitive), `*.example.com`
    (any subdomain), addresses or networks in CIDR form."""
    return ssrf.host_allowed(host, ip, settings.CONNECTOR_ALLOWED_HOSTS)


def check_url(url: str) -> Target:
    """Resolves and checks a URL; returns the target to connect to or raises UnsafeTarget."""
    return ssrf.check_url(url, allowed_hosts=settings.CONNECTOR_ALLOWED_HOSTS)
