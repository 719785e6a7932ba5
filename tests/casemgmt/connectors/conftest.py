from __future__ import annotations

import pytest

from tests.casemgmt.connectors.receiver import Receiver


@pytest.fixture
def receiver():
    with Receiver() as server:
        yield server


@pytest.fixture
def allow_local(settings):
    """The receiver listens on loopback: allow-list it (SSRF tests leave the list empty)."""
    settings.CONNECTOR_ALLOWED_HOSTS = ["127.0.0.1"]
