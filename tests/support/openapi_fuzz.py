"""Runs schemathesis (`st run <base>/openapi.json --checks all`, every phase, stateful included)
against a live service and returns its report.

The bounded run of the test suite runs every phase with few examples per operation and a fixed
seed; `make fuzz` runs more examples through OPENAPI_FUZZ_EXAMPLES,
OPENAPI_FUZZ_SEED and OPENAPI_FUZZ_PHASES, and OPENAPI_FUZZ_MAX_TIME bounds a run in seconds (see
docs/reliability.md).
"""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from tests.support.processes import LOG_DIR, ROOT, child_env

CONFIG_DIR = ROOT / "tests" / "support" / "schemathesis"


@dataclass
class FuzzReport:
    exit_code: int
    output: str
    log_path: Path

    def failures(self) -> str:
        """The failures and summary sections: what an assertion message needs."""
        start = self.output.find("=== FAILURES ===")
        if start < 0:
            start = self.output.find("=== ERRORS ===")
        text = self.output[start:] if start >= 0 else self.output
        return text if len(text) < 20000 else text[:10000] + "\n[...]\n" + text[-10000:]


def run_schemathesis(
    base_url: str, *, name: str, env: dict[str, str], headers: dict[str, str] | None = None
) -> FuzzReport:
    """`headers` go with every request, the schema's download included (the orchestrator's needs a
    viewer); per-operation credentials come from tests/support/schemathesis_hooks.py."""
    examples = os.environ.get("OPENAPI_FUZZ_EXAMPLES", "5")
    seed = os.environ.get("OPENAPI_FUZZ_SEED", "1")
    # Every phase, coverage included (each keyword's boundary and invalid values: most of the
    # schema findings come from it); few examples keep the suite's run to a couple of minutes.
    phases = os.environ.get("OPENAPI_FUZZ_PHASES", "examples,coverage,fuzzing,stateful")
    # A wall-clock budget for long runs on a busy machine (fuzzing and stateful repeat until spent).
    max_time = os.environ.get("OPENAPI_FUZZ_MAX_TIME")
    st = Path(sys.executable).with_name("st")
    args = [
        str(st), "--config-file", str(CONFIG_DIR / f"{name}.toml"), "--no-color",
        "run", f"{base_url}/openapi.json", "--checks", "all", "--max-examples", examples, "--seed", seed,
        "--phases", phases,
        # One worker: CPython 3.11 can fail parsing source in threads (hypothesis describes
        # strategies that way), and the suite's machine has two cores anyway.
        "--workers", "1", "--generation-database", "none", "--no-shrink",
        *(["--max-time", max_time] if max_time else []),
        *[arg for name_, value in (headers or {}).items() for arg in ("--header", f"{name_}: {value}")],
    ]  # fmt: skip
    hooks_env = {**env, "FUZZ_BASE_URL": base_url, "SCHEMATHESIS_HOOKS": "tests.support.schemathesis_hooks"}
    LOG_DIR.mkdir(parents=True, exist_ok=True)
    log_path = LOG_DIR / f"schemathesis-{name}-{os.environ.get('PYTEST_XDIST_WORKER', 'main')}.log"
    # Written as it runs: a run stopped from outside still leaves what it found.
    with log_path.open("w") as log:
        done = subprocess.run(
            args,
            cwd=ROOT,
            env=child_env({"PYTHONPATH": str(ROOT), **hooks_env}),
            stdout=log,
            stderr=subprocess.STDOUT,
            text=True,
            timeout=1800,
        )
    output = log_path.read_text()
    return FuzzReport(done.returncode, output, log_path)
