"""Errors raised while a job's graphs are built, validated, expanded or scheduled.

Every error is typed by its cause and keeps its constructor arguments in ``args`` so it survives
pickling (STYLE.md §5). Messages name the operators involved by their name and id, the way a
user sees them in the job, so a user can find the offending call in their program.

Raised on the thread that builds the graphs (the user's thread in ``env.execute()``, or the
driver's); no state is shared.
"""

from __future__ import annotations

from flintlock.common.errors import FlintlockError


class GraphError(FlintlockError):
    """Base class of everything the graph layer rejects."""


class UnknownNodeError(GraphError, KeyError):
    """An edge or lookup names a stream node that the graph does not contain."""

    def __init__(self, node_id: int) -> None:
        super().__init__(node_id)
        self.node_id = node_id

    def __str__(self) -> str:
        return f"the stream graph has no node with id {self.node_id}"


class InvalidEdgeError(GraphError):
    """An edge that cannot exist: into a source, to an input index the target lacks, ..."""

    def __init__(self, source: str, target: str, detail: str) -> None:
        super().__init__(source, target, detail)
        self.source = source
        self.target = target
        self.detail = detail

    def __str__(self) -> str:
        return f"invalid edge {self.source} -> {self.target}: {self.detail}"


class InvalidNodeError(GraphError):
    """A node whose own settings are inconsistent (a non-source without inputs, ...)."""

    def __init__(self, node: str, detail: str) -> None:
        super().__init__(node, detail)
        self.node = node
        self.detail = detail

    def __str__(self) -> str:
        return f"invalid operator {self.node}: {self.detail}"


class GraphCycleError(GraphError):
    """The stream graph contains a cycle; ``nodes`` names the operators on it."""

    def __init__(self, nodes: tuple[str, ...]) -> None:
        super().__init__(nodes)
        self.nodes = nodes

    def __str__(self) -> str:
        return "the job graph contains a cycle through " + " -> ".join(self.nodes)


class ForwardPartitioningError(GraphError):
    """An explicit forward edge between operators of different parallelism (Flink rejects it
    the same way: forward keeps records on the same subtask index, so both sides must match)."""

    def __init__(
        self, upstream: str, upstream_parallelism: int, downstream: str,
        downstream_parallelism: int,
    ) -> None:
        super().__init__(upstream, upstream_parallelism, downstream, downstream_parallelism)
        self.upstream = upstream
        self.upstream_parallelism = upstream_parallelism
        self.downstream = downstream
        self.downstream_parallelism = downstream_parallelism

    def __str__(self) -> str:
        return (
            "forward partitioning does not allow a change of parallelism: upstream operator "
            f"{self.upstream} has parallelism {self.upstream_parallelism}, downstream operator "
            f"{self.downstream} has parallelism {self.downstream_parallelism}; use another "
            "partitioning such as rebalance, rescale, shuffle, broadcast or global"
        )


class ParallelismError(GraphError):
    """A parallelism or max parallelism outside its bounds (parallelism > max parallelism,
    max parallelism > 32768, or < 1)."""

    def __init__(self, node: str, parallelism: int, max_parallelism: int, detail: str) -> None:
        super().__init__(node, parallelism, max_parallelism, detail)
        self.node = node
        self.parallelism = parallelism
        self.max_parallelism = max_parallelism
        self.detail = detail

    def __str__(self) -> str:
        return (
            f"operator {self.node}: parallelism {self.parallelism}, max parallelism "
            f"{self.max_parallelism}: {self.detail}"
        )


class DuplicateUidError(GraphError):
    """Two operators carry the same uid; state could not be matched to them on restore."""

    def __init__(self, uid: str, first: str, second: str) -> None:
        super().__init__(uid, first, second)
        self.uid = uid
        self.first = first
        self.second = second

    def __str__(self) -> str:
        return (
            f"uid {self.uid!r} is used by both {self.first} and {self.second}; "
            "each operator needs its own uid"
        )


class InsufficientSlotsError(GraphError):
    """The job needs more slots than the cluster offers."""

    def __init__(self, slots_needed: int, slots_available: int, detail: str = "") -> None:
        super().__init__(slots_needed, slots_available, detail)
        self.slots_needed = slots_needed
        self.slots_available = slots_available
        self.detail = detail

    def __str__(self) -> str:
        extra = f" ({self.detail})" if self.detail else ""
        return (
            f"the job needs {self.slots_needed} slots but only {self.slots_available} are "
            f"available{extra}"
        )
