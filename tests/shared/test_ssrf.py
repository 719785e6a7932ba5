"""The shared SSRF address classification."""

from __future__ import annotations

import ipaddress

import pytest

from shared.ssrf import UnsafeTarget, refusal, resolve


@pytest.mark.parametrize(
    ("address", "reason"),
    [
        ("127.0.0.1", "a loopback address"), ("::1", "a loopback address"),
        ("10.0.0.1", "a private address"), ("172.16.0.1", "a private address"),
        ("192.168.1.1", "a private address"), ("fc00::1", "a private address"),
        ("169.254.1.1", "a link-local address"), ("fe80::1", "a link-local address"),
        ("169.254.169.254", "a cloud metadata address"), ("fd00:ec2::254", "a cloud metadata address"),
        ("0.0.0.0", "an unspecified address"), ("224.0.0.1", "a multicast address"),  # noqa: S104 - data, not a bind
        ("100.64.0.1", "a non-public address"), ("::ffff:10.0.0.1", "a private address"),
        ("93.184.215.14", None), ("2606:4700::1111", None),
    ],
)  # fmt: skip
def test_refusal(address, reason):
    assert refusal(ipaddress.ip_address(address)) == reason


def test_resolve_ip_literal_and_unknown_host():
    assert resolve("127.0.0.1", 80) == [ipaddress.ip_address("127.0.0.1")]
    with pytest.raises(UnsafeTarget):
        resolve("does-not-exist.invalid", 80)
