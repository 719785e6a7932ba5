"""Retry waits: exponential backoff with an optional cap and optional jitter, the one formula every
retrying loop of both services uses (outbound deliveries, connector calls, LLM steps, heartbeats).

The wait after failed attempt n is `base * 2**(n-1)` (base, 2*base, 4*base...), never more than
`cap`. `jitter` (a fraction from 0 to 1) takes a random part of that wait off, so that many
callers failing together do not all retry in the same instant; 0 keeps the wait exact (the
callers that persist the next attempt time and test its schedule use that).
"""

from __future__ import annotations

import random

MAX_DOUBLINGS = 62


def exponential(attempt: int, *, base: float, cap: float | None = None, jitter: float = 0.0) -> float:
    if not 0.0 <= jitter <= 1.0:
        raise ValueError("jitter is a fraction from 0 to 1")
    # The exponent stops growing long past any cap: a loop that waits for ever counts attempts
    # without bound, and 2**1024 no longer fits in a float.
    wait = base * 2.0 ** min(attempt - 1, MAX_DOUBLINGS)
    if cap is not None:
        wait = min(wait, cap)
    if jitter:
        wait -= wait * jitter * random.random()  # noqa: S311 - spreading retries, not a secret
    return wait
