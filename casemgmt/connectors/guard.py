"""SSRF guard for every outbound connector URL.

A target is checked after DNS resolution: every address the name resolves to must be public
(not loopback, private, link-local, unspecified, multicast, reserved or shared address space),
unless the host is listed in CONNECTOR_ALLOWED_HOSTS. Cloud metadata addresses are refused even
when listed. The caller connects to the checked address itself (see `http.py`), so a second
resolution cannot swap in an inner address between check and connect (DNS rebinding).
"""

from __future__ import annotations

import ipaddress
from urllib.parse import urlsplit

from django.conf import settings

from shared.ssrf import METADATA_ADDRESSES, IPAddress, Target, UnsafeTarget, refusal, resolve

__all__ = ["METADATA_ADDRESSES", "Target", "UnsafeTarget", "check_url", "host_allowed", "refusal", "resolve"]


def host_allowed(host: str, ip: IPAddress) -> bool:
    """CONNECTOR_ALLOWED_HOSTS entries are host names (exact, case-insensitive), `*.example.com`
    (any subdomain), addresses or networks in CIDR form."""
    host = host.lower().rstrip(".")
    for entry in settings.CONNECTOR_ALLOWED_HOSTS:
        entry = entry.strip().lower()
        if not entry:
            continue
        if entry.startswith("*.") and host.endswith(entry[1:]):
            return True
        if host == entry:
            return True
        try:
            if ip in ipaddress.ip_network(entry, strict=False):
                return True
        except ValueError:
            continue
    return False


def check_url(url: str) -> Target:
    """Resolves and checks a URL; returns the target to connect to or raises UnsafeTarget."""
    try:
        parts = urlsplit(url)
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError as exc:
        raise UnsafeTarget(f"invalid url: {exc}") from exc
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise UnsafeTarget("url must be an absolute http or https URL")
    if parts.username or parts.password:
        raise UnsafeTarget("credentials in the url are not allowed; use headers or the connector config")
    host = parts.hostname
    addresses = resolve(host, port)
    for ip in addresses:
        reason = refusal(ip)
        if ip in METADATA_ADDRESSES or (reason and not host_allowed(host, ip)):
            raise UnsafeTarget(f"{host} resolves to {reason} ({ip}); refused")
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    return Target(scheme=parts.scheme, host=host, port=port, address=str(addresses[0]), path=path)
