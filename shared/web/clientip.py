"""The client's address behind reverse proxies.

`X-Forwarded-For` is a list any client can write, so it is believed only when the connection
comes from a configured proxy (`TRUSTED_PROXIES`: addresses and CIDR ranges), and then only as far
as it was written by trusted proxies: walking the chain from its right end (the hop nearest the
service), the first address that is not a trusted proxy is the client. Entries further left were
written by that client and are ignored, so a forged header cannot pick the address a lockout or an
audit trail sees. From any other peer the header is ignored altogether.

`shared.web.middleware.ClientAddressMiddleware` resolves the address once per request and puts it in `REMOTE_ADDR`,
keeping the connection's own peer in `PEER_ADDR`: every reader of the client address (login
lockout, logs, Django's own code) then sees the same, resolved one.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable, Sequence

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.http import HttpRequest

Network = ipaddress.IPv4Network | ipaddress.IPv6Network


def trusted_networks(entries: Iterable[str], *, setting: str) -> tuple[Network, ...]:
    """Parses a list of addresses and CIDR ranges; a bad entry stops the service at start."""
    networks = []
    for entry in (e.strip() for e in entries):
        if not entry:
            continue
        try:
            networks.append(ipaddress.ip_network(entry, strict=False))
        except ValueError:
            raise ImproperlyConfigured(f"{setting}: {entry!r} is not an IP address or CIDR range") from None
    return tuple(networks)


def _address(value: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    value = value.strip()
    if value.startswith("[") and "]" in value:  # [v6]:port
        value = value[1 : value.index("]")]
    elif value.count(":") == 1:  # v4:port
        value = value.split(":", 1)[0]
    try:
        address = ipaddress.ip_address(value)
    except ValueError:
        return None
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped:
        return address.ipv4_mapped
    return address


def _trusted(address: ipaddress.IPv4Address | ipaddress.IPv6Address, networks: Sequence[Network]) -> bool:
    return any(address in network for network in networks)


def resolve(peer: str | None, forwarded_for: str, networks: Sequence[Network]) -> str | None:
    """The client address for a connection from `peer` carrying `forwarded_for`."""
    peer_address = _address(peer or "")
    if peer_address is None or not _trusted(peer_address, networks) or not forwarded_for:
        return peer or None
    client = str(peer_address)
    for hop in reversed(forwarded_for.split(",")):
        address = _address(hop)
        if address is None:  # garbage in the chain: the last hop known to be real is the client
            return client
        client = str(address)
        if not _trusted(address, networks):
            return client
    return client  # every hop is a trusted proxy: the left-most is the nearest thing to a client


def client_ip(request: HttpRequest) -> str | None:
    """The request's client address (resolved by ClientAddressMiddleware when it runs first)."""
    if "PEER_ADDR" not in request.META:
        resolve_into(request)
    return request.META.get("REMOTE_ADDR") or None


def resolve_into(request: HttpRequest) -> None:
    peer = request.META.get("REMOTE_ADDR")
    request.META["PEER_ADDR"] = peer
    networks = getattr(settings, "TRUSTED_PROXIES", ())
    resolved = resolve(peer, request.META.get("HTTP_X_FORWARDED_FOR", ""), networks)
    request.META["REMOTE_ADDR"] = resolved or ""
