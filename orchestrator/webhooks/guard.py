"""SSRF guard for outbound webhook URLs: checked at registration and again before each attempt.

The host is resolved and every address must be public unless WEBHOOK_ALLOW_PRIVATE_TARGETS is on.
Redirects are never followed (see delivery), so a public host cannot bounce us inward.
"""

from __future__ import annotations

import ipaddress
import socket
from urllib.parse import urlsplit

from django.conf import settings


class UnsafeTarget(Exception):
    pass


def _is_public(address: str) -> bool:
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped:
        ip = ip.ipv4_mapped
    return not (
        ip.is_private or ip.is_loopback or ip.is_link_local or ip.is_reserved
        or ip.is_multicast or ip.is_unspecified
    )  # fmt: skip


def resolve(host: str, port: int) -> list[str]:
    try:
        infos = socket.getaddrinfo(host, port, proto=socket.IPPROTO_TCP)
    except (socket.gaierror, UnicodeError) as exc:
        raise UnsafeTarget(f"host {host!r} does not resolve") from exc
    # getaddrinfo's address tuples start with the host as a string (IPv4 and IPv6 alike).
    return sorted({str(info[4][0]) for info in infos})


def check_url(url: str) -> None:
    """Raises UnsafeTarget when the URL is not http(s) or points at a non-public address."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise UnsafeTarget("url must be an absolute http or https URL")
    if settings.WEBHOOK_ALLOW_PRIVATE_TARGETS:
        return
    port = parts.port or (443 if parts.scheme == "https" else 80)
    refused = [a for a in resolve(parts.hostname, port) if not _is_public(a)]
    if refused:
        raise UnsafeTarget(f"url resolves to a private, loopback or link-local address ({refused[0]})")
