"""Pipelined regions: the subtasks that must be scheduled (and restarted) together.

Two subtasks connected by a pipelined result partition exchange data while both run, so they
belong to the same region; a blocking partition is written completely before its consumer
starts, so it separates regions. Computed on the execution graph (subtask level), so a forward
pipeline of parallelism 2 without chaining is two regions, as in Flink.

Design note: joining by pipelined connections alone is not enough. If region A feeds region B
through a blocking partition while B also feeds A through another blocking partition (possible
when a region spans several job vertices), neither could start first. As in Flink, regions on
such a cycle of blocking connections are merged (strongly connected components of the region
graph), which restores a schedulable, acyclic region graph.

Regions are returned ordered by their earliest subtask in the execution graph's (topological)
vertex order. Pure functions, recomputed at each call (callers keep the result: the region
scheduler does); safe from any thread.
"""

from __future__ import annotations

from flintlock.graph.execution_graph import ExecutionGraph, ExecutionVertex

Region = frozenset[ExecutionVertex]


class _UnionFind:
    """Disjoint sets over indices 0..n-1 (path halving, union by smaller root)."""

    def __init__(self, size: int) -> None:
        self._parent = list(range(size))

    def find(self, item: int) -> int:
        while self._parent[item] != item:
            self._parent[item] = self._parent[self._parent[item]]
            item = self._parent[item]
        return item

    def union(self, a: int, b: int) -> None:
        root_a, root_b = self.find(a), self.find(b)
        if root_a != root_b:
            self._parent[max(root_a, root_b)] = min(root_a, root_b)


def _connections(graph: ExecutionGraph) -> list[tuple[int, int, bool]]:
    """(producer index, consumer index, pipelined) for every subpartition read."""
    index = {(v.job_vertex_id, v.subtask_index): i for i, v in enumerate(graph.vertices)}
    links = []
    for partition in graph.partitions.values():
        producer = index[partition.producer.job_vertex_id, partition.producer.subtask_index]
        for consumer in partition.consumers:
            target = index[partition.consumer_vertex, consumer.subtask]
            links.append((producer, target, partition.partition_type.is_pipelined))
    return links


def pipelined_regions(graph: ExecutionGraph) -> tuple[Region, ...]:
    """The pipelined regions of ``graph``; every subtask is in exactly one."""
    links = _connections(graph)
    sets = _UnionFind(len(graph.vertices))
    for producer, consumer, pipelined in links:
        if pipelined:
            sets.union(producer, consumer)
    blocking = {
        (sets.find(producer), sets.find(consumer))
        for producer, consumer, pipelined in links if not pipelined
    }
    for component in _strongly_connected(blocking):
        first = min(component)
        for member in component:
            sets.union(first, member)
    groups: dict[int, list[ExecutionVertex]] = {}
    for i, vertex in enumerate(graph.vertices):
        groups.setdefault(sets.find(i), []).append(vertex)
    return tuple(frozenset(groups[root]) for root in sorted(groups))


def _strongly_connected(edges: set[tuple[int, int]]) -> list[set[int]]:
    """Components with more than one node (or a self-loop) of the directed graph ``edges``,
    by Tarjan's algorithm written iteratively (no recursion limit)."""
    successors: dict[int, list[int]] = {}
    for a, b in sorted(edges):
        successors.setdefault(a, []).append(b)
        successors.setdefault(b, [])
    order: dict[int, int] = {}
    low: dict[int, int] = {}
    stack: list[int] = []
    on_stack: set[int] = set()
    found: list[set[int]] = []
    for root in sorted(successors):
        if root in order:
            continue
        work = [(root, 0)]
        while work:
            node, child = work.pop()
            if child == 0:
                order[node] = low[node] = len(order)
                stack.append(node)
                on_stack.add(node)
            if child < len(successors[node]):
                work.append((node, child + 1))
                nxt = successors[node][child]
                if nxt not in order:
                    work.append((nxt, 0))
                elif nxt in on_stack:
                    low[node] = min(low[node], order[nxt])
                continue
            if low[node] == order[node]:
                component = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.add(member)
                    if member == node:
                        break
                if len(component) > 1 or (node, node) in edges:
                    found.append(component)
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
    return found


def region_of(graph: ExecutionGraph, vertex: ExecutionVertex) -> Region:
    """The pipelined region of ``vertex``."""
    return next(region for region in pipelined_regions(graph) if vertex in region)
