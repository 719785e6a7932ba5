"""The shared helpers for stored secrets and retry waits."""

from __future__ import annotations

import json

import pytest
from cryptography.fernet import Fernet, InvalidToken

from shared import backoff, crypto, worker

OLD, NEW = Fernet.generate_key().decode(), Fernet.generate_key().decode()


def test_a_token_written_by_plain_fernet_still_decrypts(settings):
    """Values stored before the helper moved to shared/ are plain Fernet tokens of the UTF-8 text
    or of sorted-key JSON: they must still open."""
    settings.FIELD_ENCRYPTION_KEYS = [OLD]
    stored_text = Fernet(OLD).encrypt(b"whsec-1").decode()
    stored_json = Fernet(OLD).encrypt(json.dumps({"b": 1, "a": "x"}, sort_keys=True).encode()).decode()
    assert crypto.decrypt_text(stored_text) == "whsec-1"
    assert crypto.decrypt_json(stored_json) == {"a": "x", "b": 1}


def test_rotation_first_key_encrypts_every_key_decrypts(settings):
    settings.FIELD_ENCRYPTION_KEYS = [OLD]
    token = crypto.encrypt_json({"token": "t"})
    settings.FIELD_ENCRYPTION_KEYS = [NEW, OLD]
    assert crypto.decrypt_json(token) == {"token": "t"}
    rotated = crypto.rotate(token)
    settings.FIELD_ENCRYPTION_KEYS = [NEW]
    assert crypto.decrypt_json(rotated) == {"token": "t"}
    with pytest.raises(crypto.UndecryptableSecret, match="connector configuration"):
        crypto.decrypt_json(token, what="stored connector configuration does not decrypt with any key")
    with pytest.raises(InvalidToken):  # still Fernet's error for code that catches that
        crypto.decrypt_text(token)


def test_backoff_doubles_up_to_the_cap():
    assert [backoff.exponential(n, base=1, cap=60) for n in (1, 2, 3, 7, 8)] == [1, 2, 4, 60, 60]
    assert backoff.exponential(4, base=0.5) == 4.0  # no cap


def test_backoff_jitter_only_shortens_the_wait():
    waits = {backoff.exponential(3, base=1, cap=60, jitter=0.5) for _ in range(50)}
    assert all(2.0 <= w <= 4.0 for w in waits) and len(waits) > 1
    with pytest.raises(ValueError, match="jitter"):
        backoff.exponential(1, base=1, jitter=2)


def test_backoff_stays_at_the_cap_through_a_long_outage():
    """A loop that waits for ever (an agent riding out a database outage, a worker restarting in a
    row) counts past a thousand attempts; the wait stays the cap instead of overflowing a float."""
    assert backoff.exponential(5000, base=0.5, cap=10.0) == 10.0


def test_the_worker_restart_pauses_are_unchanged():
    """1, 2, 4 ... seconds, capped at 30, as before the supervised loop used the shared helper."""
    assert [worker.restart_delay(n) for n in range(7)] == [1, 2, 4, 8, 16, 30, 30]
