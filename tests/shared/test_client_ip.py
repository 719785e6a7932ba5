"""The client address behind proxies: X-Forwarded-For counts only from trusted peers, and only the
part of the chain trusted proxies wrote."""

from __future__ import annotations

import pytest
from django.core.exceptions import ImproperlyConfigured

from shared.web.clientip import resolve, trusted_networks

PROXIES = trusted_networks(["10.0.0.0/8", "192.0.2.1", "2001:db8::/32"], setting="TEST")


@pytest.mark.parametrize(
    ("peer", "forwarded", "client"),
    [
        ("203.0.113.5", "198.51.100.7", "203.0.113.5"),  # untrusted peer: header ignored
        ("10.1.2.3", "", "10.1.2.3"),  # trusted peer, no header: the peer itself
        ("10.1.2.3", "198.51.100.7", "198.51.100.7"),
        ("10.1.2.3", "6.6.6.6, 198.51.100.7", "198.51.100.7"),  # forged left part ignored
        ("10.1.2.3", "6.6.6.6, 198.51.100.7, 192.0.2.1, 10.9.9.9", "198.51.100.7"),  # proxy chain
        ("10.1.2.3", "10.5.5.5, 10.6.6.6", "10.5.5.5"),  # all trusted: the left-most
        ("10.1.2.3", "198.51.100.7, not-an-ip", "10.1.2.3"),  # garbage: the last real hop
        ("10.1.2.3", "198.51.100.7:4711", "198.51.100.7"),  # a port is dropped
        ("2001:db8::1", "[2001:db8:ffff::9]:80, 2a00::5", "2a00::5"),
        ("::ffff:10.1.2.3", "198.51.100.7", "198.51.100.7"),  # v4-mapped peer
    ],
)
def test_resolve(peer, forwarded, client):
    assert resolve(peer, forwarded, PROXIES) == client


def test_no_trusted_proxies_ignore_the_header():
    assert resolve("127.0.0.1", "198.51.100.7", ()) == "127.0.0.1"


def test_a_bad_entry_stops_the_service():
    with pytest.raises(ImproperlyConfigured, match="CASE_TRUSTED_PROXIES"):
        trusted_networks(["10.0.0.0/8", "proxy.local"], setting="CASE_TRUSTED_PROXIES")
