"""docs/configuration.md documents exactly the environment variables the code reads: every name in its
tables is read somewhere, and every variable the code reads is in a table. Also: each service's
variables carry its prefix, so the two services can share one environment."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "configuration.md"
# Code that reads configuration: both services, the shared library, the dev runner, the benchmarks and
# the test runner (tests/run.py); the rest of tests/ only sets variables for the code under test.
SOURCES = [
    "casemgmt",
    "orchestrator",
    "shared",
    "deploy",
    "bench",
    "tests/run.py",
    "manage_case.py",
    "manage_orch.py",
]
NAME = r"[A-Z][A-Z0-9_]*[A-Z0-9]"
READS = [
    rf"\benv\.(?:str|int|bool|float|list|db_url)\(\s*\"({NAME})\"",
    rf"\bos\.environ\.(?:get|setdefault)\(\s*\"({NAME})\"",
    rf"\bos\.environ\[\s*\"({NAME})\"\s*\]",
    rf"\bos\.getenv\(\s*\"({NAME})\"",
]
# Set by tools, not by whoever configures the services.
EXTERNAL = {"PYTEST_XDIST_WORKER"}
# Variables that belong to no single service: Django's own, the test isolation, the dev runner's
# choice of settings modules is prefixed already.
UNPREFIXED = {"DJANGO_SETTINGS_MODULE", "TEST_RUN_TOKEN", "TEST_WORKERS"}


def read_in_code() -> set[str]:
    names: set[str] = set()
    for source in SOURCES:
        path = ROOT / source
        files = [path] if path.is_file() else path.rglob("*.py")
        for file in files:
            text = file.read_text()
            for pattern in READS:
                names.update(re.findall(pattern, text))
    return names - EXTERNAL


def documented() -> set[str]:
    """Names in the first column of the document's tables (`A` / `B`, `C` list several)."""
    names: set[str] = set()
    for line in DOC.read_text().splitlines():
        if not line.startswith("| `"):
            continue
        first_cell = line.split("|")[1]
        names.update(re.findall(rf"`({NAME})`", first_cell))
    return names


def test_every_documented_variable_is_read_by_the_code() -> None:
    assert documented() - read_in_code() == set()


def test_every_variable_the_code_reads_is_documented() -> None:
    assert read_in_code() - documented() == set()


def test_the_scan_finds_the_known_readers() -> None:
    """Guards the patterns above: one variable from each way the code reads the environment."""
    names = read_in_code()
    assert {"CASE_SECRET_KEY", "ORCH_DATABASE_URL", "ORCH_AGENT_NAME", "TEST_RUN_TOKEN", "CASE_PORT"} <= names


def test_every_variable_carries_its_service_prefix() -> None:
    """The command-line client (`caseflow`, shared/client) is neither service: its own prefix."""
    prefixes = ("CASE_", "ORCH_", "CASEFLOW_")
    unprefixed = {name for name in read_in_code() | documented() if not name.startswith(prefixes)}
    assert unprefixed <= UNPREFIXED
