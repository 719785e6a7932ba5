"""The run graph's layout: layers by longest path (every edge points right), no two boxes overlap,
and ordering within a layer untangles crossings a naive order would draw."""

from __future__ import annotations

from itertools import combinations

from shared.web.graph import NODE_HEIGHT, NODE_WIDTH, Node, layout


def graph(edges: dict[str, list[str]]) -> dict[str, Node]:
    placed = layout([Node(id=n, label=n, status="pending", upstream=ups) for n, ups in edges.items()])
    return {n.id: n for n in placed.nodes}


def crossings(nodes: dict[str, Node], edges: dict[str, list[str]]) -> int:
    pairs = [(nodes[u], nodes[n]) for n, ups in edges.items() for u in ups]
    count = 0
    for (a1, b1), (a2, b2) in combinations(pairs, 2):
        if a1.x == a2.x and b1.x == b2.x and (a1.y - a2.y) * (b1.y - b2.y) < 0:
            count += 1
    return count


def test_layers_follow_the_longest_path():
    edges = {"a": [], "b": ["a"], "c": ["b"], "d": ["a", "c"]}  # d waits for a directly and via c
    nodes = graph(edges)
    assert nodes["a"].x < nodes["b"].x < nodes["c"].x < nodes["d"].x
    for target, ups in edges.items():
        for up in ups:
            assert nodes[up].x + NODE_WIDTH < nodes[target].x


def test_boxes_never_overlap_and_fit_the_drawing():
    edges = {f"r{i}": [] for i in range(4)} | {f"m{i}": [f"r{i}", f"r{(i + 1) % 4}"] for i in range(4)}
    edges["end"] = [f"m{i}" for i in range(4)]
    result = layout([Node(id=n, label=n, status="pending", upstream=ups) for n, ups in edges.items()])
    for a, b in combinations(result.nodes, 2):
        assert abs(a.x - b.x) >= NODE_WIDTH or abs(a.y - b.y) >= NODE_HEIGHT, (a.id, b.id)
    assert all(n.x >= 0 and n.x + NODE_WIDTH <= result.width for n in result.nodes)
    assert all(n.y >= 0 and n.y + NODE_HEIGHT <= result.height for n in result.nodes)
    assert len(result.edges) == 12


def test_ordering_removes_crossings_of_two_parallel_chains():
    # Listed so that the first order would cross both chains: a1->b2 side and a2->b1 side.
    edges = {"a1": [], "a2": [], "b2": ["a2"], "b1": ["a1"], "c1": ["b1"], "c2": ["b2"]}
    assert crossings(graph(edges), edges) == 0


def test_an_upstream_outside_the_graph_and_a_cycle_do_not_break_the_layout():
    nodes = graph({"x": ["gone"], "y": ["z"], "z": ["y"]})
    assert set(nodes) == {"x", "y", "z"}


def test_a_long_chain_is_laid_out_without_recursion():
    edges = {"t0": []} | {f"t{i}": [f"t{i - 1}"] for i in range(1, 3000)}
    nodes = graph(edges)
    assert nodes["t2999"].layer == 2999 and nodes["t0"].layer == 0
