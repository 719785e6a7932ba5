"""The shared signing helpers: the `sha256=` form every caller used before (same bytes), and
Standard Webhooks against the reference vector its libraries test with."""

from __future__ import annotations

import hashlib
import hmac

from shared import signing

# The Standard Webhooks reference libraries' test vector.
VECTOR_SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
VECTOR_ID, VECTOR_TS, VECTOR_BODY = "msg_p5jXN8AQM9LWM0D4loKWxJek", "1614265330", b'{"test": 2432232314}'
VECTOR_SIGNATURE = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="


def test_sha256_form_is_the_hex_hmac_of_the_message():
    body = b'{"event":"case.step"}'
    expected = "sha256=" + hmac.new(b"s3cret", body, hashlib.sha256).hexdigest()
    assert signing.sha256_sign("s3cret", body) == expected
    assert signing.sha256_verify("s3cret", body, expected)
    assert not signing.sha256_verify("s3cret", body + b" ", expected)
    assert not signing.sha256_verify("other", body, expected)
    # Exact: a variant spelling is not the same signature (replay guards key on it).
    assert not signing.sha256_verify("s3cret", body, expected.upper().replace("SHA256=", "sha256="))
    assert signing.sha256_normalise(" " + expected.upper()) is None
    assert signing.sha256_normalise("sha256= " + expected[7:].upper() + " ") == expected
    assert not signing.sha256_verify("s3cret", body, None) and not signing.sha256_verify("s3cret", body, "é")


def test_timestamped_message_joins_id_timestamp_and_body():
    assert signing.timestamped("1700000000", b"{}") == b"1700000000.{}"
    assert signing.timestamped("1700000000", b"{}", msg_id="m1") == b"m1.1700000000.{}"


def test_standard_webhooks_reference_vector():
    assert signing.standard_sign(VECTOR_SECRET, VECTOR_ID, VECTOR_TS, VECTOR_BODY) == VECTOR_SIGNATURE
    assert signing.standard_verify(VECTOR_SECRET, VECTOR_ID, VECTOR_TS, VECTOR_BODY, VECTOR_SIGNATURE)
    # Several signatures while a sender rotates: one valid v1 is enough; other versions are skipped.
    rotating = f"v1,bm90LXRoaXMtb25l v1a,whatever {VECTOR_SIGNATURE}"
    assert signing.standard_verify(VECTOR_SECRET, VECTOR_ID, VECTOR_TS, VECTOR_BODY, rotating)
    for changed in ((VECTOR_ID + "x", VECTOR_TS, VECTOR_BODY), (VECTOR_ID, "1614265331", VECTOR_BODY),
                    (VECTOR_ID, VECTOR_TS, VECTOR_BODY + b" ")):  # fmt: skip
        assert not signing.standard_verify(VECTOR_SECRET, *changed, VECTOR_SIGNATURE)
    assert not signing.standard_verify(
        VECTOR_SECRET, VECTOR_ID, VECTOR_TS, VECTOR_BODY, "v2," + VECTOR_SIGNATURE[3:]
    )


def test_timestamp_window_is_both_ways():
    assert signing.timestamp_fresh("1000", 300, now=1300) and signing.timestamp_fresh("1600", 300, now=1300)
    assert not signing.timestamp_fresh("999", 300, now=1300) and not signing.timestamp_fresh(
        "1601", 300, now=1300
    )
    for bad in (None, "", "-5", "1e3", "１２３", "9" * 40):
        assert not signing.timestamp_fresh(bad, 300, now=1300)
