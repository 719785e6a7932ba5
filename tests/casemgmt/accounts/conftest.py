import pytest
from django.core.cache import cache

from casemgmt.accounts.lockout import PREFIX


@pytest.fixture(autouse=True)
def fresh_ip_lockout():
    """Login failures from the test client's address must not add up across tests (each test's
    emails are unique, so only the IP counters are shared)."""
    keys = [f"{PREFIX}ip:{ip}{suffix}" for ip in ("127.0.0.1", "203.0.113.9") for suffix in ("", ":ends")]
    cache.delete_many(keys)
    yield
    cache.delete_many(keys)
