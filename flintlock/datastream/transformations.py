"""The environment's record of what the user's program asked for, and its translation into a
``StreamGraph``.

Every operator call (``map``, ``key_by(...).reduce``, ``print``, ...) appends one
``Transformation``: the operator description, its inputs and the settings made on it later
(name, uid, parallelism, chaining, slot sharing group). Partitioning calls and ``union``
create no transformation; they only change the ``StreamInput`` list the next operator reads
(which upstream transformation, through which partitioner) — Flink's virtual partition and
union transformations.

``build_stream_graph`` translates the transformations reachable from the operators (a source
nobody reads is left out, as in Flink) into a fresh ``StreamGraph``: one node per
transformation in creation order, one edge per input, with

* the slot sharing group inherited from the inputs when none was set (all inputs in one group:
  that group; otherwise ``default``), as Flink does;
* the job-level settings (name, default/max parallelism, chaining, runtime mode, buffer
  timeout, configuration and checkpoint settings);
* every operator description, key selector and partitioner checked for picklability.

Owned by the user's thread; the environment mutates transformations while the job is built.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from flintlock.common.config import Configuration
from flintlock.common.operator_spec import OperatorKind, OperatorSpec
from flintlock.common.typeinfo import TypeInformation
from flintlock.datastream.functions import function_name
from flintlock.datastream.pickle_check import check_picklable
from flintlock.graph.stream_graph import ChainingStrategy, Partitioner, StreamGraph

DEFAULT_SLOT_SHARING_GROUP = "default"


@dataclass(frozen=True)
class StreamInput:
    """One upstream transformation a stream reads, and the partitioner in between (None: the
    default, forward or rebalance)."""

    transformation_id: int
    partitioner: Partitioner | None = None
    output_tag: str | None = None
    """Read the upstream operator's side output of this tag instead of its main output."""

    def with_partitioner(self, partitioner: Partitioner | None) -> StreamInput:
        return StreamInput(self.transformation_id, partitioner, self.output_tag)


@dataclass(eq=False)
class Transformation:
    """One operator of the user's program, with the settings made on it."""

    id: int
    name: str
    spec: OperatorSpec
    inputs: list[tuple[StreamInput, int]]
    output_type: TypeInformation | None = None
    parallelism: int | None = None
    max_parallelism: int | None = None
    uid: str | None = None
    description: str | None = None
    slot_sharing_group: str | None = None
    chaining: ChainingStrategy = ChainingStrategy.ALWAYS
    buffer_timeout_ms: int | None = None
    key_selectors: tuple[Any, ...] = ()
    non_parallel: bool = False
    cached: Any = None
    """``cache.CachedStream`` for the operator of ``DataStream.cache()``, else None."""

    @property
    def is_source(self) -> bool:
        return self.spec.kind is OperatorKind.SOURCE


@dataclass
class JobSettings:
    """The job-level values ``build_stream_graph`` copies into the graph."""

    job_name: str
    default_parallelism: int
    max_parallelism: int | None
    chaining_enabled: bool
    runtime_mode: str
    buffer_timeout_ms: int
    configuration: Configuration
    checkpoint_config: object | None = None


def reachable(pending: Sequence[Transformation], known: Mapping[int, Transformation]
              ) -> list[Transformation]:
    """The transformations the job runs, in creation order: every pending operator and
    everything it reads from (looked up in ``known``, which outlives ``execute``: a stream
    built before one job may feed an operator of the next, as in Flink)."""
    keep: set[int] = set()
    stack = [t.id for t in pending if not t.is_source]
    while stack:
        current = stack.pop()
        if current in keep:
            continue
        keep.add(current)
        stack.extend(stream_input.transformation_id for stream_input, _ in known[current].inputs)
    return [known[identifier] for identifier in sorted(keep)]


def build_stream_graph(transformations: Iterable[Transformation],
                       settings: JobSettings) -> StreamGraph:
    """A new, unvalidated stream graph for ``transformations`` (in creation order)."""
    graph = StreamGraph(
        job_name=settings.job_name, default_parallelism=settings.default_parallelism,
        max_parallelism=settings.max_parallelism, chaining_enabled=settings.chaining_enabled,
        runtime_mode=settings.runtime_mode, buffer_timeout_ms=settings.buffer_timeout_ms,
        checkpoint_config=settings.checkpoint_config, configuration=settings.configuration,
    )
    node_ids: dict[int, int] = {}
    groups: dict[int, str] = {}
    for transformation in transformations:
        groups[transformation.id] = _slot_sharing_group(transformation, groups)
        check_transformation_picklable(transformation)
        node = graph.add_node(
            transformation.name, transformation.spec,
            parallelism=transformation.parallelism, is_source=transformation.is_source,
            num_inputs=transformation.spec.num_inputs, chaining=transformation.chaining,
            max_parallelism=transformation.max_parallelism, uid=transformation.uid,
            slot_sharing_group=groups[transformation.id],
            buffer_timeout_ms=transformation.buffer_timeout_ms,
            output_type=transformation.output_type,
            key_selectors=transformation.key_selectors,
        )
        node_ids[transformation.id] = node.id
        for stream_input, input_index in transformation.inputs:
            graph.add_edge(node_ids[stream_input.transformation_id], node.id,
                           stream_input.partitioner, input_index,
                           output_tag=stream_input.output_tag)
    return graph


def _slot_sharing_group(transformation: Transformation, known: dict[int, str]) -> str:
    if transformation.slot_sharing_group is not None:
        return transformation.slot_sharing_group
    upstream = {known[stream_input.transformation_id]
                for stream_input, _ in transformation.inputs}
    return upstream.pop() if len(upstream) == 1 else DEFAULT_SLOT_SHARING_GROUP


def check_transformation_picklable(transformation: Transformation) -> None:
    """Raise ``UnpicklableFunctionError`` if anything the operator ships cannot be pickled."""
    spec = transformation.spec
    name = transformation.name
    if spec.function is not None:
        check_picklable(spec.function, name, f"the function {function_name(spec.function)}")
    if spec.source is not None:
        check_picklable(spec.source, name, f"the source {type(spec.source).__name__}")
    if spec.sink is not None:
        check_picklable(spec.sink, name, f"the sink {type(spec.sink).__name__}")
    for selector in transformation.key_selectors:
        check_picklable(selector, name, f"the key selector {function_name(selector)}")
    for stream_input, _ in transformation.inputs:
        partitioner = stream_input.partitioner
        if partitioner is not None:
            check_picklable(partitioner, name, f"the {partitioner.kind.name} partitioner "
                                               "of its input")
    check_picklable(spec, name, "its operator description")
