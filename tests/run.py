"""Runs both services' suites (one pytest run per Django project) and prints one closing line.

Usage: python tests/run.py [case|orch|case-sqlite|orch-sqlite] [extra pytest args...]
The -sqlite suites cover the embedded default's database paths (what `make run` uses) on SQLite.
Exit status is non-zero when any test failed, errored, or when no test ran at all.
"""

from __future__ import annotations

import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SUITES = {
    "case": ("casemgmt.config.settings.test", ["tests/shared", "tests/casemgmt"]),
    "orch": ("orchestrator.config.settings.test", ["tests/orchestrator"]),
    "case-sqlite": ("casemgmt.config.settings.test_sqlite", ["tests/sqlite/shared", "tests/sqlite/casemgmt"]),
    "orch-sqlite": ("orchestrator.config.settings.test_sqlite", ["tests/sqlite/orchestrator"]),
}


def run_suite(name: str, extra: list[str]) -> tuple[int, dict[str, int]]:
    settings, paths = SUITES[name]
    report = ROOT / "var" / f"junit-{name}.xml"
    report.parent.mkdir(parents=True, exist_ok=True)
    workers = os.environ.get("TEST_WORKERS", "2")
    command = [sys.executable, "-m", "pytest", *paths, f"--ds={settings}", "-n", workers, "--dist", "loadfile",
               f"--junitxml={report}", "-q", *extra]  # fmt: skip
    print(f"\n=== {name}: {' '.join(command[2:])}", flush=True)
    code = subprocess.call(command, cwd=ROOT)
    counts = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
    if report.exists():
        for suite in ET.parse(report).getroot().iter("testsuite"):  # noqa: S314 - our own pytest's JUnit report
            for key in counts:
                counts[key] += int(suite.get(key, 0))
    return code, counts


def main() -> int:
    args = sys.argv[1:]
    names = [args.pop(0)] if args and args[0] in SUITES else list(SUITES)
    total = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
    codes = []
    for name in names:
        code, counts = run_suite(name, args)
        codes.append(code)
        for key in total:
            total[key] += counts[key]
    failed = total["failures"] + total["errors"]
    passed = total["tests"] - failed - total["skipped"]
    print(f"\nTotal: {passed} passed, {failed} failed, {total['skipped']} skipped")
    if passed == 0:
        print("No test ran.", file=sys.stderr)
        return 1
    return 0 if all(code == 0 for code in codes) and failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
