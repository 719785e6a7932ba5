"""Three agents in three network namespaces (own addresses, PostgreSQL and Redis reached over veth
pairs) drain one queue of 150 task runs; one host's link is cut while it holds a task run (the
bounded version of `bench/faults/several_hosts.py`, which runs 3,000)."""

from __future__ import annotations

import pytest

from bench.faults import several_hosts

pytestmark = [pytest.mark.worker]


@pytest.fixture(scope="module", autouse=True)
def namespaces():
    reason = several_hosts.namespaces_permitted()
    if reason:
        pytest.skip(reason)


def test_three_hosts_drain_one_queue_and_a_cut_host_is_recovered_like_a_kill():
    figures = several_hosts.run(task_runs_total=150, host_count=3, timeout=300).values
    assert figures["links cut"] == 1 and figures["held by the cut host"] >= 1, figures
    assert figures["task runs"] == 150, figures
    assert (figures["lost"], figures["stuck"], figures["run twice"]) == (0, 0, 0), figures
    # The cut host's task runs were taken over under a new attempt; nothing else ran again.
    assert figures["retried attempts"] >= figures["held by the cut host"], figures
    assert figures["executions"] <= 150 + figures["retried attempts"], figures
    assert figures["agents alive at end"] == 3, figures
    assert figures["API 5xx"] == 0, figures
