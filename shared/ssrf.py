"""Which network addresses an outbound call to a user-supplied URL may reach (SSRF guard).

Pure functions both services can build their guards on: resolve a host once, and say why an
address is refused. The caller decides about allow-lists and must connect to the address it
checked (a second DNS lookup could answer differently: DNS rebinding).
"""

from __future__ import annotations

import ipaddress
import socket

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
