"""Outside witnesses of audit checkpoints: an append-only file and a webhook.

Both take one checkpoint (`shared.audit.checkpoints.checkpoint_out`) at a time and raise when they
could not keep it, so the checkpoint stays pending and is offered again by the next run.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import urllib3

from shared.audit.checkpoints import Witness, WitnessError
from shared.ssrf import Target, UnsafeTarget, pinned_request

USER_AGENT = "audit-checkpoint-witness/1"


def file_witness(path: str | Path) -> Witness:
    """Appends one JSON line per checkpoint. One `write` on an O_APPEND descriptor puts each line
    whole at the end even with two processes writing, and fsync makes it durable before the
    checkpoint is marked witnessed."""

    def witness(checkpoint: dict[str, Any]) -> None:
        line = (json.dumps(checkpoint, sort_keys=True, separators=(",", ":")) + "\n").encode("utf-8")
        descriptor = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o640)
        try:
            os.write(descriptor, line)
            os.fsync(descriptor)
        finally:
            os.close(descriptor)

    return witness


def webhook_witness(url: str, *, check_url: Callable[[str], Target], timeout: float) -> Witness:
    """POSTs each checkpoint as JSON through the service's SSRF guard (`check_url` resolves and
    checks the URL; the request goes to the address it checked). Any 2xx keeps it; redirects are
    not followed. Errors never carry the URL, which may hold a token."""

    def witness(checkpoint: dict[str, Any]) -> None:
        body = json.dumps(checkpoint, separators=(",", ":")).encode("utf-8")
        headers = {"Content-Type": "application/json", "User-Agent": USER_AGENT}
        try:
            response = pinned_request(check_url(url), "POST", headers, body, timeout)
            status = response.status
            response.release_conn()
        except UnsafeTarget as exc:
            raise WitnessError("the witness URL is refused by the outbound address guard") from exc
        except (urllib3.exceptions.HTTPError, OSError) as exc:
            raise WitnessError(f"the witness webhook is unreachable ({exc.__class__.__name__})") from exc
        if not 200 <= status < 300:
            raise WitnessError(f"the witness webhook answered HTTP {status}")

    return witness
