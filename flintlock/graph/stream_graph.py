"""The stream graph: the user's operators and the streams between them, before chaining.

The DataStream API (``flintlock.datastream``) builds one ``StreamGraph`` per job: one
``StreamNode`` per operator (source, map, keyed reduce, sink, ...) and one ``StreamEdge`` per
stream connecting two of them, with the ``Partitioner`` that decides which downstream subtask
each record goes to. ``job_graph.build_job_graph`` turns it into a job graph by chaining.

Invariants, checked when a node or edge is added or by ``validate``:

* node ids are unique, positive and assigned in insertion order;
* an edge joins two existing nodes, never enters a source, and its ``input_index`` is below
  the target's ``num_inputs``; every input of every non-source has at least one edge;
* the graph is acyclic (``validate``);
* an *explicit* forward edge joins operators of equal parallelism (a missing partitioner is
  resolved later: forward if the parallelisms match, rebalance otherwise);
* 1 <= parallelism <= max parallelism <= 32768 for every operator; uids are unique.

The operator payload (``StreamNode.operator``) is opaque here: the graph never inspects it.

Thread ownership: built and mutated by the one thread that runs the user's program; frozen by
convention once ``env.execute()`` hands it to the job-graph builder.
"""

from __future__ import annotations

import enum
import heapq
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from flintlock.common.config import Configuration
from flintlock.graph.errors import (
    DuplicateUidError,
    ForwardPartitioningError,
    GraphCycleError,
    InvalidEdgeError,
    InvalidNodeError,
    ParallelismError,
    UnknownNodeError,
)

UPPER_BOUND_MAX_PARALLELISM = 1 << 15
"""The largest max parallelism (number of key groups) a job may use, as in Flink."""

DEFAULT_LOWER_BOUND_MAX_PARALLELISM = 128
"""The smallest max parallelism derived for an operator that sets none, as in Flink."""

KeySelector = Callable[[Any], Any]
CustomPartitionFunction = Callable[[Any, int], int]


def default_max_parallelism(parallelism: int) -> int:
    """Flink's derived max parallelism: 1.5 x parallelism rounded up to a power of two,
    clamped to [128, 32768]. Used when neither the operator nor the job sets one."""
    wanted = parallelism + parallelism // 2
    power = 1 << max(0, wanted - 1).bit_length()
    return min(max(power, DEFAULT_LOWER_BOUND_MAX_PARALLELISM), UPPER_BOUND_MAX_PARALLELISM)


class PartitionerKind(enum.Enum):
    """How a stream's records are spread over the downstream subtasks."""

    FORWARD = "forward"  # subtask i -> subtask i (equal parallelism)
    REBALANCE = "rebalance"  # round robin over all downstream subtasks
    RESCALE = "rescale"  # round robin over a local, contiguous subset (pointwise)
    HASH = "hash"  # by key group of the record's key
    BROADCAST = "broadcast"  # every record to every downstream subtask
    SHUFFLE = "shuffle"  # uniformly at random
    CUSTOM = "custom"  # a user function (key, num_partitions) -> index
    GLOBAL = "global"  # everything to subtask 0


_POINTWISE = frozenset({PartitionerKind.FORWARD, PartitionerKind.RESCALE})


@dataclass(frozen=True)
class Partitioner:
    """A stream's partitioning: its kind plus the functions that kind needs.

    ``key_selector`` is set for HASH and CUSTOM, ``custom`` for CUSTOM only. Instances compare
    by kind and by the identity of their functions.
    """

    kind: PartitionerKind
    key_selector: KeySelector | None = None
    custom: CustomPartitionFunction | None = None

    def __post_init__(self) -> None:
        needs_key = self.kind in (PartitionerKind.HASH, PartitionerKind.CUSTOM)
        if needs_key != (self.key_selector is not None):
            raise ValueError(f"a {self.kind.name} partitioner "
                             f"{'needs' if needs_key else 'takes no'} key selector")
        if (self.kind is PartitionerKind.CUSTOM) != (self.custom is not None):
            raise ValueError("only a CUSTOM partitioner has (and needs) a partition function")

    @classmethod
    def forward(cls) -> Partitioner:
        return cls(PartitionerKind.FORWARD)

    @classmethod
    def rebalance(cls) -> Partitioner:
        return cls(PartitionerKind.REBALANCE)

    @classmethod
    def rescale(cls) -> Partitioner:
        return cls(PartitionerKind.RESCALE)

    @classmethod
    def hash(cls, key_selector: KeySelector) -> Partitioner:
        return cls(PartitionerKind.HASH, key_selector=key_selector)

    @classmethod
    def broadcast(cls) -> Partitioner:
        return cls(PartitionerKind.BROADCAST)

    @classmethod
    def shuffle(cls) -> Partitioner:
        return cls(PartitionerKind.SHUFFLE)

    @classmethod
    def custom_partition(
        cls, partitioner: CustomPartitionFunction, key_selector: KeySelector
    ) -> Partitioner:
        """A CUSTOM partitioner (also reachable as ``Partitioner.custom(fn, key_selector)``)."""
        return cls(PartitionerKind.CUSTOM, key_selector=key_selector, custom=partitioner)

    @classmethod
    def global_(cls) -> Partitioner:
        return cls(PartitionerKind.GLOBAL)

    @property
    def is_pointwise(self) -> bool:
        """True for FORWARD and RESCALE: a producer talks to a subset of the consumers."""
        return self.kind in _POINTWISE

    @property
    def is_broadcast(self) -> bool:
        return self.kind is PartitionerKind.BROADCAST

    def __str__(self) -> str:
        return self.kind.name


# ``custom`` is both a field (the partition function) and, per the API, the name of a helper
# constructor. A non-data descriptor on the class serves both: looked up on the class it is the
# constructor; on an instance the field value in the instance's ``__dict__`` wins.
class _CustomConstructor:
    """``Partitioner.custom(fn, key_selector)`` builds a CUSTOM partitioner."""

    def __get__(
        self, instance: object, owner: type | None = None
    ) -> Callable[[CustomPartitionFunction, KeySelector], Partitioner]:
        return Partitioner.custom_partition


Partitioner.custom = _CustomConstructor()  # type: ignore[assignment]


class ChainingStrategy(enum.Enum):
    """Whether an operator may be fused with its neighbours into one subtask."""

    ALWAYS = "always"  # chains to its predecessor and lets successors chain to it
    HEAD = "head"  # starts a chain: never chained to its predecessor
    NEVER = "never"  # never chained on either side


@dataclass(eq=False)
class StreamNode:
    """One operator of the user's program. Mutable while the graph is built.

    ``parallelism``/``max_parallelism`` None mean the job's default. ``key_selectors`` holds,
    per input, the key selector of a keyed operator's input (None where the input is not
    keyed); empty for non-keyed operators. ``operator`` is the opaque operator description.
    """

    id: int
    name: str
    operator: object
    parallelism: int | None = None
    max_parallelism: int | None = None
    uid: str | None = None
    slot_sharing_group: str = "default"
    chaining: ChainingStrategy = ChainingStrategy.ALWAYS
    is_source: bool = False
    num_inputs: int = 1
    buffer_timeout_ms: int | None = None
    output_type: object | None = None
    key_selectors: tuple[KeySelector | None, ...] = ()

    def __str__(self) -> str:
        return f"'{self.name}' (id {self.id})"


@dataclass(eq=False)
class StreamEdge:
    """A stream from one operator's output to one input of another.

    ``partitioner`` None means "not chosen by the user": forward when both sides have the same
    parallelism, rebalance otherwise (decided when the job graph is built). ``output_tag``
    names a side output (None: the main output).
    """

    source_id: int
    target_id: int
    partitioner: Partitioner | None = None
    input_index: int = 0
    output_tag: str | None = None


@dataclass(eq=False)
class StreamGraph:
    """The operators of one job and the streams between them, plus job-level settings.

    ``max_parallelism`` None derives each operator's max parallelism from its parallelism
    (``default_max_parallelism``); ``checkpoint_config`` is opaque to the graph layer and
    travels with the graph to the runtime; ``configuration`` is the job's configuration.
    """

    job_name: str = "Flink Streaming Job"
    default_parallelism: int = 1
    max_parallelism: int | None = None
    chaining_enabled: bool = True
    runtime_mode: str = "streaming"
    buffer_timeout_ms: int = 100
    checkpoint_config: object | None = None
    configuration: Configuration = field(default_factory=Configuration)
    _nodes: dict[int, StreamNode] = field(default_factory=dict, init=False, repr=False)
    _edges: list[StreamEdge] = field(default_factory=list, init=False, repr=False)
    _next_id: int = field(default=1, init=False, repr=False)

    # -- building ----------------------------------------------------------------------

    def add_node(
        self,
        name: str,
        operator: object,
        *,
        parallelism: int | None = None,
        is_source: bool = False,
        num_inputs: int | None = None,
        chaining: ChainingStrategy = ChainingStrategy.ALWAYS,
        max_parallelism: int | None = None,
        uid: str | None = None,
        slot_sharing_group: str = "default",
        buffer_timeout_ms: int | None = None,
        output_type: object | None = None,
        key_selectors: tuple[KeySelector | None, ...] = (),
    ) -> StreamNode:
        """Add an operator and return its node. ``num_inputs`` defaults to 0 for a source
        and 1 otherwise; a source with inputs is rejected."""
        inputs = (0 if is_source else 1) if num_inputs is None else num_inputs
        node = StreamNode(
            id=self._next_id, name=name, operator=operator, parallelism=parallelism,
            max_parallelism=max_parallelism, uid=uid, slot_sharing_group=slot_sharing_group,
            chaining=chaining, is_source=is_source, num_inputs=inputs,
            buffer_timeout_ms=buffer_timeout_ms, output_type=output_type,
            key_selectors=tuple(key_selectors),
        )
        _check_node_shape(node)
        self._nodes[node.id] = node
        self._next_id += 1
        return node

    def add_edge(
        self,
        source_id: int,
        target_id: int,
        partitioner: Partitioner | None = None,
        input_index: int = 0,
        output_tag: str | None = None,
    ) -> StreamEdge:
        """Connect ``source_id``'s output to input ``input_index`` of ``target_id``."""
        source, target = self.node(source_id), self.node(target_id)
        if target.is_source:
            raise InvalidEdgeError(str(source), str(target), "a source has no inputs")
        if not 0 <= input_index < target.num_inputs:
            raise InvalidEdgeError(
                str(source), str(target),
                f"input index {input_index} but the operator has {target.num_inputs} input(s)",
            )
        if source_id == target_id:
            raise InvalidEdgeError(str(source), str(target), "an operator cannot read itself")
        edge = StreamEdge(source_id, target_id, partitioner, input_index, output_tag)
        self._edges.append(edge)
        return edge

    # -- reading -----------------------------------------------------------------------

    @property
    def nodes(self) -> Mapping[int, StreamNode]:
        """Nodes by id, in insertion (id) order."""
        return self._nodes

    @property
    def edges(self) -> tuple[StreamEdge, ...]:
        """All edges in the order they were added."""
        return tuple(self._edges)

    def node(self, node_id: int) -> StreamNode:
        try:
            return self._nodes[node_id]
        except KeyError:
            raise UnknownNodeError(node_id) from None

    def in_edges(self, node_id: int) -> list[StreamEdge]:
        self.node(node_id)
        return [edge for edge in self._edges if edge.target_id == node_id]

    def out_edges(self, node_id: int) -> list[StreamEdge]:
        self.node(node_id)
        return [edge for edge in self._edges if edge.source_id == node_id]

    def sources(self) -> list[StreamNode]:
        return [node for node in self._nodes.values() if node.is_source]

    def sinks(self) -> list[StreamNode]:
        """Nodes without outgoing edges."""
        producers = {edge.source_id for edge in self._edges}
        return [node for node in self._nodes.values() if node.id not in producers]

    def parallelism_of(self, node_id: int, default_parallelism: int | None = None) -> int:
        """The node's parallelism, or the job default when it sets none."""
        own = self.node(node_id).parallelism
        if own is not None:
            return own
        return self.default_parallelism if default_parallelism is None else default_parallelism

    def max_parallelism_of(
        self, node_id: int, default_parallelism: int | None = None,
        max_parallelism: int | None = None,
    ) -> int:
        """The node's max parallelism: its own, else the job's, else derived from its
        parallelism as Flink derives it."""
        own = self.node(node_id).max_parallelism
        if own is not None:
            return own
        job_max = self.max_parallelism if max_parallelism is None else max_parallelism
        if job_max is not None:
            return job_max
        return default_max_parallelism(self.parallelism_of(node_id, default_parallelism))

    def resolved_partitioner(
        self, edge: StreamEdge, default_parallelism: int | None = None
    ) -> Partitioner:
        """The edge's partitioner, or the default: forward when parallelisms match, else
        rebalance."""
        if edge.partitioner is not None:
            return edge.partitioner
        same = self.parallelism_of(edge.source_id, default_parallelism) == self.parallelism_of(
            edge.target_id, default_parallelism
        )
        return Partitioner.forward() if same else Partitioner.rebalance()

    def topological_order(self) -> list[StreamNode]:
        """Nodes so that every edge points forward; ties broken by smallest id first."""
        indegree = {node_id: 0 for node_id in self._nodes}
        for edge in self._edges:
            indegree[edge.target_id] += 1
        ready = [node_id for node_id, degree in indegree.items() if degree == 0]
        heapq.heapify(ready)
        order: list[StreamNode] = []
        while ready:
            node_id = heapq.heappop(ready)
            order.append(self._nodes[node_id])
            for edge in self._edges:
                if edge.source_id == node_id:
                    indegree[edge.target_id] -= 1
                    if indegree[edge.target_id] == 0:
                        heapq.heappush(ready, edge.target_id)
        if len(order) != len(self._nodes):
            raise GraphCycleError(self._cycle_names(indegree))
        return order

    def _cycle_names(self, indegree: Mapping[int, int]) -> tuple[str, ...]:
        """Names of the nodes on one cycle among the nodes Kahn's algorithm left over.

        Every left-over node has a left-over predecessor, so walking predecessors from any of
        them must revisit a node; the walk from that node on, reversed, is a cycle.
        """
        left = {node_id for node_id, degree in indegree.items() if degree > 0}
        path: list[int] = [min(left)]
        while True:
            predecessor = min(
                edge.source_id for edge in self._edges
                if edge.target_id == path[-1] and edge.source_id in left
            )
            if predecessor in path:
                cycle = path[path.index(predecessor):][::-1]
                return tuple(str(self._nodes[node_id]) for node_id in [*cycle, cycle[0]])
            path.append(predecessor)

    # -- validation --------------------------------------------------------------------

    def validate(
        self, default_parallelism: int | None = None, max_parallelism: int | None = None
    ) -> None:
        """Raise the first problem found (see the module docstring for the rules).

        ``default_parallelism``/``max_parallelism`` override the graph's own settings.
        """
        for node in self._nodes.values():
            _check_node_shape(node)
            connected = {e.input_index for e in self._edges if e.target_id == node.id}
            missing = sorted(set(range(node.num_inputs)) - connected)
            if missing:
                raise InvalidNodeError(
                    str(node), f"input {missing[0]} of {node.num_inputs} is not connected")
        self.topological_order()
        for node in self._nodes.values():
            self._check_parallelism(node, default_parallelism, max_parallelism)
        for edge in self._edges:
            self._check_forward(edge, default_parallelism)
        _check_unique_uids(self._nodes.values())

    def _check_parallelism(
        self, node: StreamNode, default_parallelism: int | None, max_parallelism: int | None
    ) -> None:
        parallelism = self.parallelism_of(node.id, default_parallelism)
        maximum = self.max_parallelism_of(node.id, default_parallelism, max_parallelism)
        detail = None
        if parallelism < 1:
            detail = "parallelism must be at least 1"
        elif not 1 <= maximum <= UPPER_BOUND_MAX_PARALLELISM:
            detail = f"max parallelism must be between 1 and {UPPER_BOUND_MAX_PARALLELISM}"
        elif parallelism > maximum:
            detail = "parallelism may not exceed max parallelism"
        if detail is not None:
            raise ParallelismError(str(node), parallelism, maximum, detail)

    def _check_forward(self, edge: StreamEdge, default_parallelism: int | None) -> None:
        if edge.partitioner is None or edge.partitioner.kind is not PartitionerKind.FORWARD:
            return
        up = self.parallelism_of(edge.source_id, default_parallelism)
        down = self.parallelism_of(edge.target_id, default_parallelism)
        if up != down:
            raise ForwardPartitioningError(
                str(self._nodes[edge.source_id]), up, str(self._nodes[edge.target_id]), down
            )

    def __iter__(self) -> Iterator[StreamNode]:
        return iter(self._nodes.values())


def _check_node_shape(node: StreamNode) -> None:
    if node.is_source and node.num_inputs != 0:
        raise InvalidNodeError(str(node), "a source has no inputs (num_inputs must be 0)")
    if not node.is_source and node.num_inputs not in (1, 2):
        raise InvalidNodeError(str(node), f"num_inputs must be 1 or 2, not {node.num_inputs}")
    if node.key_selectors and len(node.key_selectors) != node.num_inputs:
        raise InvalidNodeError(
            str(node), f"{len(node.key_selectors)} key selectors for {node.num_inputs} input(s)"
        )


def _check_unique_uids(nodes: Iterable[StreamNode]) -> None:
    owners: dict[str, StreamNode] = {}
    for node in nodes:
        if node.uid is None:
            continue
        if node.uid in owners:
            raise DuplicateUidError(node.uid, str(owners[node.uid]), str(node))
        owners[node.uid] = node
