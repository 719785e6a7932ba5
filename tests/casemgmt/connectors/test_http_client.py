"""The guarded HTTP client against a real local server: methods, headers, bodies, timeouts, and the
SSRF guard (after DNS resolution, on redirects, pinned to the checked address)."""

from __future__ import annotations

import ipaddress
import socket

import pytest

from casemgmt.connectors import guard
from casemgmt.connectors.base import ConnectorError
from casemgmt.connectors.http import GuardedHttp
from shared import ssrf


@pytest.mark.parametrize("method", ["GET", "POST", "PUT", "PATCH", "DELETE"])
def test_methods_headers_and_body(receiver, allow_local, method):
    http = GuardedHttp()
    response = http.request(method, f"{receiver.url}/echo?x=1", headers={"X-Custom": "v"}, json={"a": 1})
    assert response.status_code == 200 and response.json()["method"] == method
    got = receiver.received("/echo")[-1]
    assert got.method == method and got.path == "/echo?x=1" and got.headers["X-Custom"] == "v"
    assert got.json() == {"a": 1} and got.headers["Content-Type"] == "application/json"
    assert got.headers["Host"] == receiver.url.removeprefix("http://")


def test_exchange_is_recorded_with_credentials_redacted(receiver, allow_local):
    seen = []
    http = GuardedHttp(secrets=("sup3r-secret-token",), on_exchange=seen.append)
    http.request("POST", f"{receiver.url}/echo?key=sup3r-secret-token",
                 headers={"Authorization": "Bearer abc", "X-Note": "sup3r-secret-token"}, data="hello")  # fmt: skip
    [exchange] = seen
    assert exchange["headers"]["Authorization"] == "***" and exchange["headers"]["X-Note"] == "***"
    assert exchange["url"].endswith("?key=***") and exchange["statusCode"] == 200
    assert "sup3r-secret-token" not in repr(exchange) and exchange["method"] == "POST"


def test_timeout_is_transient(receiver, allow_local):
    with pytest.raises(ConnectorError) as caught:
        GuardedHttp().request("GET", f"{receiver.url}/hold", timeout=0.3)
    assert caught.value.code == "timeout" and caught.value.transient
    assert str(caught.value) == "no answer within 0.3s"


def closed_port() -> int:
    with socket.socket() as sock:  # bound, never listening: a connection to it is refused
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_a_refused_connection_is_reported_as_refused_not_as_a_timeout(allow_local):
    seen = []
    with pytest.raises(ConnectorError) as caught:
        GuardedHttp(on_exchange=seen.append).request("GET", f"http://127.0.0.1:{closed_port()}/x")
    assert (caught.value.code, str(caught.value)) == ("network_error", "connection refused")
    assert caught.value.transient and seen[0]["error"] == "network_error: connection refused"


def test_a_tls_failure_is_reported_as_one(receiver, allow_local):
    with pytest.raises(ConnectorError) as caught:  # https:// to a plain HTTP server
        GuardedHttp().request("GET", receiver.url.replace("http://", "https://") + "/echo")
    assert caught.value.code == "network_error" and str(caught.value).startswith("TLS error: ")


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:9/",  # loopback
        "http://localhost:9/",  # loopback after DNS resolution
        "http://10.1.2.3/",  # private
        "http://192.168.0.10/",
        "http://172.16.5.5/",
        "http://169.254.10.10/",  # link-local
        "http://169.254.169.254/latest/meta-data/",  # metadata
        "http://[fd00:ec2::254]/",  # metadata (IPv6)
        "http://[::1]:9/",
        "http://0.0.0.0:9/",  # unspecified
        "http://224.0.0.1/",  # multicast
        "http://[::ffff:127.0.0.1]:9/",  # IPv4-mapped loopback
    ],
)
def test_ssrf_refusals(settings, url):
    settings.CONNECTOR_ALLOWED_HOSTS = []
    with pytest.raises(ConnectorError) as caught:
        GuardedHttp().request("GET", url)
    assert caught.value.code == "unsafe_target" and not caught.value.transient


def test_redirect_to_private_is_refused(receiver, settings):
    # The first hop is allowed (listed by name); its redirect points at a private address.
    settings.CONNECTOR_ALLOWED_HOSTS = ["127.0.0.1"]
    seen = []
    with pytest.raises(ConnectorError) as caught:
        GuardedHttp(on_exchange=seen.append).request("GET", f"{receiver.url}/redirect?to=http://10.0.0.7/x")
    assert caught.value.code == "unsafe_target"
    assert [e["statusCode"] for e in seen] == [302, None] and "unsafe_target" in seen[1]["error"]


def test_redirect_is_followed_and_checked_again(receiver, allow_local):
    response = GuardedHttp().request("GET", f"{receiver.url}/redirect?to=/echo")
    assert response.status_code == 200 and [r.path for r in receiver.received()][-1] == "/echo"


def test_metadata_refused_even_when_listed(settings):
    settings.CONNECTOR_ALLOWED_HOSTS = ["169.254.0.0/16"]
    with pytest.raises(ConnectorError) as caught:
        GuardedHttp().request("GET", "http://169.254.169.254/")
    assert caught.value.code == "unsafe_target"


def test_connection_is_pinned_to_the_checked_address(receiver, settings, monkeypatch):
    """DNS rebinding: the name resolves to an allowed address when checked and to another one
    afterwards; the request still goes to the checked address (one resolution only)."""
    settings.CONNECTOR_ALLOWED_HOSTS = ["rebind.test"]
    port = receiver.server.server_address[1]
    answers = iter(["127.0.0.1", "10.9.9.9", "10.9.9.9"])
    real = socket.getaddrinfo

    def fake_getaddrinfo(host, *args, **kwargs):
        if host == "rebind.test":
            return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (next(answers), port))]
        return real(host, *args, **kwargs)

    # The outside system here is DNS: a resolver that changes its answer between lookups.
    monkeypatch.setattr(ssrf.socket, "getaddrinfo", fake_getaddrinfo)
    response = GuardedHttp().request("GET", f"http://rebind.test:{port}/echo")
    assert response.status_code == 200
    assert receiver.received("/echo")[-1].headers["Host"] == f"rebind.test:{port}"


def test_allow_list_by_name_and_wildcard(settings):
    ip = ipaddress.ip_address("10.0.0.1")
    settings.CONNECTOR_ALLOWED_HOSTS = ["*.corp.test", "api.internal"]
    assert guard.host_allowed("x.corp.test", ip) and guard.host_allowed("API.internal", ip)
    assert not guard.host_allowed("corp.test.evil", ip) and not guard.host_allowed("other", ip)
