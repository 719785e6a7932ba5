"""An agent without the priority, pool and max_active_runs code paths, for bench/orch_bench.py's
"unused limits" comparison only (never deployed). It runs `manage_orch.py run_agent` after taking
out, in memory, what those features add to a task run when none is configured:

- the claim's guard (the task run has no priority and no pool, and no prioritized task run waits in
  its queue): the claim becomes the plain conditional UPDATE;
- the admission check after a run of a DAG ends (do runs wait for room under max_active_runs);
- the pool wake-up after a task run of a pool ends (never reached without pools anyway).
"""

from __future__ import annotations

import sys

import django
from django.core.management import execute_from_command_line


def strip_limits() -> None:
    from orchestrator.runs import claim, pools, state

    claim.FAST_CLAIM_SQL = claim.EXACT_CLAIM_SQL
    state.dag_admit_if_waiting = lambda *, dag_id: 0
    pools.pool_wake = lambda *, pool: 0


if __name__ == "__main__":
    django.setup()
    strip_limits()
    execute_from_command_line(["manage_orch.py", "run_agent", *sys.argv[1:]])
