"""Operator-level record counts of an operator chain: Flink's ``numRecordsIn`` and
``numRecordsOut`` (and, computed by the reporter, their ``…PerSecond``) in each operator's
metric group, next to the task-level ones.

Counting per batch, never per record: the only thing that runs on the data path is
``CountingChainedOutput.collect_batch``, the chained edge between two operators of a chain,
which adds the batch's length to an ``int`` and hands the batch on — one Python call per
batch and edge (benchmarks/metrics_cost.py measures it). Everything else is read, not counted:

- an operator's ``numRecordsIn``: the head's is the task's ``numRecordsIn`` (the input
  processor's per-batch counter) — for a source head, the records it emitted, as FLIP-33
  defines a source's ``numRecordsIn``; a chained operator's is the sum of the chained edges
  into it;
- an operator's ``numRecordsOut``: per output tag (the main output, each side output) the
  count of one of its targets — a chained edge's, else the record writer's own total
  (``RecordWriter.io_counts``, counted when records are serialised) — summed over the tags:
  a batch sent to several targets of one tag counts once, as Flink's counting output does.

Threads: the edges count on the task thread; the gauges are read on the TaskManager's
heartbeat thread (``int`` reads, atomic under the GIL; a value may be one batch old).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from flintlock.runtime.metrics import Counter, SubtaskMetricGroups
from flintlock.runtime.metrics.report import NUM_RECORDS_IN, NUM_RECORDS_OUT
from flintlock.runtime.network.writer import RecordWriter
from flintlock.runtime.tasks.operator import StreamOperator


class CountingChainedOutput:
    """The output of one operator into a chained successor: ``process_batch`` by direct
    call, after counting the batch (watermarks go straight through, uncounted)."""

    __slots__ = ("_process", "emit_watermark", "emit_watermark_status", "records")

    def __init__(self, operator: StreamOperator) -> None:
        self._process = operator.process_batch
        self.emit_watermark = operator.process_watermark
        self.emit_watermark_status = operator.process_watermark_status
        self.records = 0  # task thread writes; the heartbeat thread reads

    def collect_batch(self, records: list[Any]) -> None:
        self.records += len(records)
        self._process(records)


@dataclass(slots=True)
class _OperatorEdges:
    """What one operator's counts are read from (filled while the chain is built)."""

    into: list[CountingChainedOutput] = field(default_factory=list)
    chained_out: dict[str | None, CountingChainedOutput] = field(default_factory=dict)
    written_out: dict[str | None, RecordWriter] = field(default_factory=dict)

    def records_out(self) -> int:
        total = sum(edge.records for edge in self.chained_out.values())
        for tag, writer in self.written_out.items():
            if tag not in self.chained_out:
                total += writer.io_counts()[0]
        return total


class OperatorRecordCounts:
    """Collects a chain's edges while it is built, then registers each operator's gauges."""

    def __init__(self) -> None:
        self._edges: dict[int, _OperatorEdges] = {}

    def chained(self, node_id: int, tag: str | None, target: StreamOperator,
                target_node_id: int) -> CountingChainedOutput:
        """The counting edge from operator ``node_id``'s output ``tag`` into ``target``."""
        edge = CountingChainedOutput(target)
        self._of(node_id).chained_out.setdefault(tag, edge)
        self._of(target_node_id).into.append(edge)
        return edge

    def written(self, node_id: int, tag: str | None, writer: RecordWriter) -> None:
        self._of(node_id).written_out.setdefault(tag, writer)

    def register(self, groups: SubtaskMetricGroups, operators: Sequence[tuple[int, str, str]],
                 task_records_in: Counter, source_head: bool) -> None:
        """``operators``: (node id, operator id, operator name), the head first."""
        for position, (node_id, operator_id, name) in enumerate(operators):
            edges = self._of(node_id)
            group = groups.operator(operator_id, name)
            records_in: Callable[[], int]
            if position > 0:
                records_in = _sum_of(edges.into)
            elif source_head:
                records_in = edges.records_out
            else:
                records_in = task_records_in.get_count
            group.gauge(NUM_RECORDS_IN, records_in)
            group.gauge(NUM_RECORDS_OUT, edges.records_out)

    def _of(self, node_id: int) -> _OperatorEdges:
        edges = self._edges.get(node_id)
        if edges is None:
            edges = self._edges[node_id] = _OperatorEdges()
        return edges


def _sum_of(edges: Sequence[CountingChainedOutput]) -> Callable[[], int]:
    frozen = tuple(edges)
    return lambda: sum(edge.records for edge in frozen)

