"""Runs and task runs: scheduling, the agents' claim and outcome, wake-ups, pools and admission.

Each module imports only the modules of the layers below it (`a | b`: siblings, which import
neither the other). Top first:

    urls
    apis
    inputs
    services | tasks | outputs | idempotency | logstream | openapi
    executor
    command
    finish
    completion
    claiming
    claim
    pools
    state
    wakeups | transient
    selectors | planning
    models

- inputs: the request bodies and query strings the API modules read (InputSerializers).
- tasks: the Celery adapter alone (`execute_task_run` calls the executor). Wake-ups are published
  by task name (wakeups), so nothing below imports the task to send it.
- executor: one attempt on an agent: claim, command, outcome, and the pool slot it frees.
- command: the subprocess side (process group, reaper, output capture, timeout, cancel poll).
- finish: an attempt's outcome: completed (completion), retried, or failed; recovery.
- completion: running -> completed, dependents queued, the run completed when it was the last.
- claiming: the claim when priorities or pools order a queue; claim: the conditional claim and
  the `Execution` it returns.
- pools: pool slots. state: run status (start, fail, cancel, complete) and max_active_runs
  admission, with the lock order every transition keeps.
- wakeups: publishing wake-ups; transient: database errors an agent waits out.

Imports inside functions count as imports: none may go upwards. `lint-imports` (the contract in
pyproject.toml) and tests/orchestrator/test_code_structure.py check this order.
"""
