"""SSRF guard for outbound webhook URLs: checked at registration and again before each attempt.

The host is resolved once and every address must be public unless WEBHOOK_ALLOW_PRIVATE_TARGETS is
on (cloud metadata addresses stay refused either way). The delivery then connects to the address
checked here (`shared.ssrf.pinned_request`), so a second DNS answer cannot swap in an inner address
between check and connect (DNS rebinding). Redirects are never followed (see delivery).
"""

from __future__ import annotations

from urllib.parse import urlsplit

from django.conf import settings

from shared.ssrf import METADATA_ADDRESSES, Target, UnsafeTarget, refusal, resolve

__all__ = ["Target", "UnsafeTarget", "check_url"]


def check_url(url: str) -> Target:
    """Resolves and checks a URL; returns the target to connect to or raises UnsafeTarget."""
    try:
        parts = urlsplit(url)
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError as exc:
        raise UnsafeTarget(f"invalid url: {exc}") from exc
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise UnsafeTarget("url must be an absolute http or https URL")
    addresses = resolve(parts.hostname, port)
    for ip in addresses:
        reason = refusal(ip)
        if ip in METADATA_ADDRESSES or (reason and not settings.WEBHOOK_ALLOW_PRIVATE_TARGETS):
            raise UnsafeTarget(f"url resolves to {reason} ({ip})")
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    return Target(scheme=parts.scheme, host=parts.hostname, port=port, address=str(addresses[0]), path=path)
