"""Prints bench/case_floor.sh's results as the Markdown table docs/benchmarks.md shows.

python bench/case_floor_table.py var/bench/case-floor/results
"""

from __future__ import annotations

import re
import sys

# phase on the project side -> (floor phase it is compared with, goal ratio)
GOALS = {
    "create": ("create", 0.5),
    "read": ("read", 0.8),
    "list": ("read", 0.5),
    # Creates spread over 8 case types in 4 tenants: the floor has no counter or audit chain to
    # queue on, so its one-tenant create is the comparison.
    "spread-create": ("create", 0.6),
}
LABELS = {"spread-create": "spread create: 8 case types in 4 tenants (vs floor create)"}


def parse(path: str) -> dict[tuple[str, str], dict[str, float]]:
    rows = {}
    with open(path) as lines:
        for line in lines:
            mode, phase = line.split()[:2]
            rows[(mode, phase)] = {k: float(v) for k, v in re.findall(r"(\w+)=([\d.]+)", line)}
    return rows


def main() -> None:
    rows = parse(sys.argv[1])
    print(
        "| operation (32 connections) | floor req/s | case service req/s | ratio | goal | p50 / p95 / p99 ms |"
    )
    print("|---|---|---|---|---|---|")
    for phase, (floor_phase, goal) in GOALS.items():
        project, floor = rows.get(("project", phase)), rows.get(("floor", floor_phase))
        if not project or not floor:
            continue
        ratio = project["rps"] / floor["rps"]
        label = LABELS.get(phase) or (f"{phase} (vs floor {floor_phase})" if floor_phase != phase else phase)
        print(
            f"| {label} | {floor['rps']:.0f} | {project['rps']:.0f} | {ratio:.2f}x | >= {goal}x "
            f"{'met' if ratio >= goal else 'NOT met'} | {project['p50_ms']:.0f} / {project['p95_ms']:.0f} / "
            f"{project['p99_ms']:.0f} |"
        )
    for phase in ("read@half", "create@half"):
        if ("project", phase) in rows:
            r = rows[("project", phase)]
            verdict = "met" if r["p95_ms"] < 50 else "NOT met"
            print(
                f"| {phase} rate | - | {r['rps']:.0f} | - | p95 < 50 ms {verdict} | "
                f"{r['p50_ms']:.0f} / {r['p95_ms']:.0f} / {r['p99_ms']:.0f} |"
            )
    errors = {
        f"{m} {p}": int(r["non2xx"] + r["errors"]) for (m, p), r in rows.items() if r["non2xx"] + r["errors"]
    }
    if errors:
        print(f"\nnon-2xx or socket errors: {errors}")


if __name__ == "__main__":
    main()
