"""An agent whose task run start and end times keep their microseconds, for bench/orch_bench.py's
hand-over phase only (never deployed). It runs `manage_orch.py run_agent` with one change, made in
memory: the claim and the completion take their time with `django.utils.timezone.now` instead of
`shared.api.time.now_ms`, which drops the microseconds so that what is stored is what the API
shows (docs/decisions.md, "Timestamps").

Why: the hand-over is the dependent's start minus its upstream's end, a few milliseconds. Stored to
the millisecond, each difference is off by up to a millisecond either way (its mean stays right,
its percentiles come in whole milliseconds), while the bare Celery floor's times are the
`time.time()` floats. The code path is otherwise the deployed agent's, statement for statement.
"""

from __future__ import annotations

import sys

import django
from django.core.management import execute_from_command_line


def keep_microseconds() -> None:
    from django.utils import timezone

    from orchestrator.runs import claim, completion

    claim.now_ms = timezone.now
    completion.now_ms = timezone.now


if __name__ == "__main__":
    django.setup()
    keep_microseconds()
    execute_from_command_line(["manage_orch.py", "run_agent", *sys.argv[1:]])
