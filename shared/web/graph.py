"""A DAG laid out in layers for an SVG drawing, left to right (a Sugiyama-style layout); the
orchestrator draws runs with it and the case console a case's workflow.

Each node's layer is its longest path from a root, so every edge points right; within a layer,
nodes are ordered by the mean position of their neighbours in the layer before (then after), a few
sweeps, which removes most crossings in the small graphs runs have. Edges are cubic curves from a
node's right side to the next node's left side. No JavaScript: the server draws, htmx refreshes.
"""

from __future__ import annotations

from dataclasses import dataclass, field

NODE_WIDTH = 170
NODE_HEIGHT = 44
LAYER_GAP = 70
ROW_GAP = 22
MARGIN = 12
SWEEPS = 4


@dataclass
class Node:
    id: str
    label: str
    status: str
    href: str = ""
    status_label: str = ""  # the status in the reader's language (default: `status`)
    kind: str = ""  # what the node is (a step's type: task, agent, connector, timer …), shown under its label
    layer: int = 0
    x: int = 0
    y: int = 0
    upstream: list[str] = field(default_factory=list)

    @property
    def short_label(self) -> str:
        """What fits in the box; the full label is the node's title and accessible name."""
        return self.label if len(self.label) <= 20 else self.label[:19] + "…"


@dataclass(frozen=True)
class Edge:
    source: str
    target: str
    path: str


@dataclass
class Layout:
    nodes: list[Node]
    edges: list[Edge]
    width: int
    height: int


def _layers(nodes: dict[str, Node]) -> None:
    """Longest path from a root, in topological order (no recursion: a long chain is fine).
    Upstream ids outside the graph are ignored; nodes on a cycle (which the services refuse) are
    placed after whatever of theirs was placed."""
    waiting = {n.id: {u for u in n.upstream if u in nodes and u != n.id} for n in nodes.values()}
    downstream: dict[str, list[str]] = {n: [] for n in nodes}
    for node_id, ups in waiting.items():
        for up in ups:
            downstream[up].append(node_id)
    ready = [n for n, ups in waiting.items() if not ups]
    placed: set[str] = set()
    while len(placed) < len(nodes):
        if not ready:  # a cycle: break it at the first unplaced node
            ready = [next(n for n in nodes if n not in placed)]
        node_id = ready.pop()
        if node_id in placed:
            continue
        placed.add(node_id)
        node = nodes[node_id]
        node.layer = 1 + max((nodes[u].layer for u in node.upstream if u in placed), default=-1)
        for child in downstream[node_id]:
            waiting[child].discard(node_id)
            if not waiting[child]:
                ready.append(child)


def _order(nodes: dict[str, Node]) -> list[list[Node]]:
    count = 1 + max((n.layer for n in nodes.values()), default=-1)
    layers: list[list[Node]] = [[] for _ in range(count)]
    for node in nodes.values():  # insertion order is the first ordering
        layers[node.layer].append(node)
    downstream: dict[str, list[str]] = {n: [] for n in nodes}
    for node in nodes.values():
        for up in node.upstream:
            if up in downstream:
                downstream[up].append(node.id)

    def reorder(layer: list[Node], neighbours: dict[str, list[str]], position: dict[str, int]) -> None:
        def key(node: Node) -> tuple[float, int]:
            near = [position[n] for n in neighbours[node.id] if n in position]
            own = position.get(node.id, 0)
            return (sum(near) / len(near) if near else own, own)

        layer.sort(key=key)

    for _ in range(SWEEPS):
        upstream = {n.id: n.upstream for n in nodes.values()}
        for index in range(1, count):  # down: by the layer before
            position = {n.id: i for i, n in enumerate(layers[index - 1])}
            position.update({n.id: i for i, n in enumerate(layers[index])})
            reorder(layers[index], upstream, position)
        for index in range(count - 2, -1, -1):  # up: by the layer after
            position = {n.id: i for i, n in enumerate(layers[index + 1])}
            position.update({n.id: i for i, n in enumerate(layers[index])})
            reorder(layers[index], downstream, position)
    return layers


def _curve(source: Node, target: Node) -> str:
    x1, y1 = source.x + NODE_WIDTH, source.y + NODE_HEIGHT // 2
    x2, y2 = target.x, target.y + NODE_HEIGHT // 2
    bend = (x2 - x1) // 2
    return f"M{x1},{y1} C{x1 + bend},{y1} {x2 - bend},{y2} {x2},{y2}"


def layout(nodes: list[Node]) -> Layout:
    by_id = {n.id: n for n in nodes}
    _layers(by_id)
    layers = _order(by_id)
    tallest = max((len(layer) for layer in layers), default=0)
    height = MARGIN * 2 + tallest * NODE_HEIGHT + max(tallest - 1, 0) * ROW_GAP
    for index, layer in enumerate(layers):
        used = len(layer) * NODE_HEIGHT + max(len(layer) - 1, 0) * ROW_GAP
        top = (height - used) // 2  # each layer centred vertically
        for row, node in enumerate(layer):
            node.x = MARGIN + index * (NODE_WIDTH + LAYER_GAP)
            node.y = top + row * (NODE_HEIGHT + ROW_GAP)
    edges = [
        Edge(up, node.id, _curve(by_id[up], node)) for node in nodes for up in node.upstream if up in by_id
    ]
    width = MARGIN * 2 + len(layers) * NODE_WIDTH + max(len(layers) - 1, 0) * LAYER_GAP
    ordered = [node for layer in layers for node in layer]  # reading order: layer by layer
    return Layout(ordered, edges, max(width, 1), max(height, 1))
