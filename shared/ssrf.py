"""Which network addresses an outbound call to a user-supplied URL may reach (SSRF guard).

Pieces both services build their guards on: resolve a host once, say why an address is refused,
and send a request to the address that was checked (`pinned_request`). The caller decides about
allow-lists; it must connect to the address it checked, since a second DNS lookup could answer
differently (DNS rebinding).
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import urllib3

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
# Instance metadata endpoints (AWS/GCP/Azure IPv4, AWS IPv6): never reachable, allow-list or not.
METADATA_ADDRESSES = frozenset(
    {ipaddress.ip_address("169.254.169.254"), ipaddress.ip_address("fd00:ec2::254")}
)


class UnsafeTarget(Exception):
    pass


def refusal(ip: IPAddress) -> str | None:
    """Why an address is not public (IPv4-mapped IPv6 judged as its IPv4 address), or None."""
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped:
        ip = ip.ipv4_mapped
    checks = (
        (ip in METADATA_ADDRESSES, "a cloud metadata"), (ip.is_loopback, "a loopback"),
        (ip.is_link_local, "a link-local"), (ip.is_unspecified, "an unspecified"),
        (ip.is_multicast, "a multicast"), (ip.is_private, "a private"),
        (not ip.is_global, "a non-public"),
    )  # fmt: skip
    return next((f"{what} address" for hit, what in checks if hit), None)


def resolve(host: str, port: int) -> list[IPAddress]:
    """Every address the host resolves to (IPv4 first), or UnsafeTarget when it does not resolve."""
    try:
        infos = socket.getaddrinfo(host, port, proto=socket.IPPROTO_TCP)
    except (socket.gaierror, UnicodeError) as exc:
        raise UnsafeTarget(f"host {host!r} does not resolve") from exc
    addresses = {ipaddress.ip_address(str(info[4][0]).split("%", 1)[0]) for info in infos}
    return sorted(addresses, key=lambda a: (a.version, int(a)))


@dataclass(frozen=True)
class Target:
    scheme: str
    host: str  # the name as written (sent as Host and TLS SNI)
    port: int
    address: str  # the checked address to connect to
    path: str  # path and query


def host_allowed(host: str, ip: IPAddress, allowed_hosts: Iterable[str]) -> bool:
    """`allowed_hosts` entries are host names (exact, case-insensitive), `*.example.com`
    (any subdomain), addresses or networks in CIDR form."""
    host = host.lower().rstrip(".")
    for entry in allowed_hosts:
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


def check_url(url: str, *, allowed_hosts: Iterable[str], allow_private: bool = False) -> Target:
    """Resolves and checks a URL; returns the target to connect to or raises UnsafeTarget. Every
    address must be public unless the host is allowed (`host_allowed`) or `allow_private` allows
    every non-public address; metadata addresses never are."""
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
        allowed = allow_private or host_allowed(host, ip, allowed_hosts)
        if ip in METADATA_ADDRESSES or (reason and not allowed):
            raise UnsafeTarget(f"{host} resolves to {reason} ({ip}); refused")
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    return Target(scheme=parts.scheme, host=host, port=port, address=str(addresses[0]), path=path)


def pinned_request(
    target: Target, method: str, headers: dict[str, str], body: bytes | None, timeout: float
) -> urllib3.BaseHTTPResponse:
    """Sends one request to `target.address` (no DNS lookup) with the URL's own name as Host, TLS
    SNI and the name the certificate must match. Redirects are returned, never followed. The body
    is not read yet (`preload_content=False`): the caller reads what it needs and releases it."""
    default_port = 443 if target.scheme == "https" else 80
    host_header = target.host if target.port == default_port else f"{target.host}:{target.port}"
    if ":" in target.host and target.port == default_port:
        host_header = f"[{target.host}]"
    options: dict[str, Any] = {"timeout": urllib3.Timeout(connect=timeout, read=timeout), "maxsize": 1}
    if target.scheme == "https":
        pool: urllib3.HTTPConnectionPool = urllib3.HTTPSConnectionPool(
            target.address, target.port, server_hostname=target.host, assert_hostname=target.host,
            cert_reqs="CERT_REQUIRED", **options,
        )  # fmt: skip
    else:
        pool = urllib3.HTTPConnectionPool(target.address, target.port, **options)
    with pool:
        return pool.urlopen(
            method, target.path, body=body, headers={**headers, "Host": host_header},
            redirect=False, retries=False, preload_content=False, assert_same_host=False,
        )  # fmt: skip


def network_failure(exc: BaseException, timeout: float) -> tuple[bool, str]:
    """(whether it was a timeout, what happened) for an error of `pinned_request`.

    urllib3 files a refused or failed connection (NewConnectionError) under its connect-timeout
    error, so a closed port used to be reported as "no answer within 10s"; the cause is read first.
    The text names no header or body, only the failure (and the address, which the caller knows)."""
    errors = urllib3.exceptions
    if isinstance(exc, errors.NameResolutionError):
        return False, "DNS lookup failed"
    if isinstance(exc, errors.NewConnectionError):
        cause = exc.__cause__ or exc.__context__
        if isinstance(cause, ConnectionRefusedError):
            return False, "connection refused"
        if isinstance(cause, socket.timeout | TimeoutError):
            return True, f"no connection within {timeout:g}s"
        return False, f"could not connect: {cause or exc}"
    if isinstance(exc, errors.ConnectTimeoutError):
        return True, f"no connection within {timeout:g}s"
    if isinstance(exc, errors.TimeoutError | socket.timeout | TimeoutError):
        return True, f"no answer within {timeout:g}s"
    if isinstance(exc, errors.SSLError):
        return False, f"TLS error: {exc}"
    if isinstance(exc, errors.ProtocolError):
        return False, f"connection broken: {exc.args[-1] if exc.args else exc}"
    if isinstance(exc, ConnectionRefusedError):
        return False, "connection refused"
    return False, f"{type(exc).__name__}: {exc}"
