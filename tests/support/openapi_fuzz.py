"""Runs schemathesis (`st run <base>/openapi.json --checks all`, every phase, stateful included)
against a live service and returns its report.

The bounded run of the test suite uses few examples per operation, a fixed seed and no coverage
phase; `make fuzz` runs every phase with more examples through OPENAPI_FUZZ_EXAMPLES,
OPENAPI_FUZZ_SEED and OPENAPI_FUZZ_PHASES (see docs/reliability.md).
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
    examples = os.environ.get("OPENAPI_FUZZ_EXAMPLES", "3")
    seed = os.environ.get("OPENAPI_FUZZ_SEED", "1")
    # The coverage phase (every keyword's boundary values) takes minutes: `make fuzz` adds it.
    phases = os.environ.get("OPENAPI_FUZZ_PHASES", "examples,fuzzing,stateful")
    st = Path(sys.executable).with_name("st")
    args = [
        str(st), "--config-file", str(CONFIG_DIR / f"{name}.toml"), "--no-color",
        "run", f"{base_url}/openapi.json", "--checks", "all", "--max-examples", examples, "--seed", seed,
        "--phases", phases,
        # One worker: CPython 3.11 can fail parsing source in threads (hypothesis describes
        # strategies that way), and the suite's machine has two cores anyway.
        "--workers", "1", "--generation-database", "none", "--no-shrink",
        *[arg for name_, value in (headers or {}).items() for arg in ("--header", f"{name_}: {value}")],
    ]  # fmt: skip
    hooks_env = {**env, "FUZZ_BASE_URL": base_url, "SCHEMATHESIS_HOOKS": "tests.support.schemathesis_hooks"}
    LOG_DIR.mkdir(parents=True, exist_ok=True)
    log_path = LOG_DIR / f"schemathesis-{name}-{os.environ.get('PYTEST_XDIST_WORKER', 'main')}.log"
    done = subprocess.run(
        args,
        cwd=ROOT,
        env=child_env({"PYTHONPATH": str(ROOT), **hooks_env}),
        capture_output=True,
        text=True,
        timeout=1800,
    )
    output = done.stdout + done.stderr
    log_path.write_text(output)
    return FuzzReport(done.returncode, output, log_path)
