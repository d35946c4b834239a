"""The four jobs as Bytewax 0.21 dataflows, with Bytewax's own operators and the same user
functions.

What differs from the flintlock jobs, and why:

* Bytewax keys are strings, so each ``key_on`` wraps the key function in ``str`` (and the
  outputs turn the key back into an int); the running counts use ``stateful_map`` (Bytewax's
  ``reduce_final`` emits only at the end), the filter ``filter_value``.
* ``NumberSource`` plays ``NumberSequenceSource``: one contiguous range per worker, in
  batches of 1,000.
* (c) uses ``count_window`` with an ``EventClock`` whose wait is the allowed out-of-orderness.
  Its watermark is per key and moves with system time, so with two sources feeding a key in
  different stretches of event time most records would be late; the window job's numbers
  therefore come from one source partition (the windows still run on every worker).
* (d) has no event-time timers: a ``stateful`` operator counts per key and reports at the end
  of input (``on_eof``), which is when the flintlock job's timer fires; it calls the timestamp
  assigner per record, as the flintlock job's watermark generator does.
* Outputs go to a list (the counterpart of ``execute_and_collect``) or, for (b), to
  ``PartFileSink``: each worker writes its own file and fsyncs it once at the end, as each
  ``FileSink`` subtask does. Bytewax's ``DirSink`` fsyncs after every batch it writes; with two
  workers the batches coming out of the exchange are small, and the fsyncs made the word count
  5 to 50 times slower (500,000 words: 1.4 s with one worker, 6.4 s with two threads) — a
  durability policy the flintlock job and the bare loop do not pay, so not used here.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import bytewax.operators as op
import bytewax.operators.windowing as win
from bytewax.connectors.files import DirSource
from bytewax.dataflow import Dataflow
from bytewax.inputs import FixedPartitionedSource, StatefulSourcePartition
from bytewax.outputs import DynamicSink, StatelessSinkPartition
from bytewax.testing import cluster_main, run_main

from benchmarks.ported import functions as f

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
BATCH = 1_000


class _RangePartition(StatefulSourcePartition[int, int]):
    def __init__(self, start: int, stop: int) -> None:
        self.next, self.stop = start, stop

    def next_batch(self) -> list[int]:
        if self.next >= self.stop:
            raise StopIteration
        end = min(self.stop, self.next + BATCH)
        batch = list(range(self.next, end))
        self.next = end
        return batch

    def snapshot(self) -> int:
        return self.next


class NumberSource(FixedPartitionedSource[int, int]):
    """0..n-1 cut into ``parts`` contiguous ranges, one partition each."""

    def __init__(self, n: int, parts: int) -> None:
        self.n, self.parts = n, parts

    def list_parts(self) -> list[str]:
        return [str(part) for part in range(self.parts)]

    def build_part(self, step_id: str, for_part: str, resume_state: int | None
                   ) -> _RangePartition:
        part = int(for_part)
        start, stop = self.n * part // self.parts, self.n * (part + 1) // self.parts
        return _RangePartition(start if resume_state is None else resume_state, stop)


class _CollectPartition(StatelessSinkPartition[Any]):
    def __init__(self, sink: CollectSink) -> None:
        self.sink = sink

    def write_batch(self, items: list[Any]) -> None:
        if self.sink.first is None:
            self.sink.first = time.perf_counter()
        self.sink.items.extend(items)


class CollectSink(DynamicSink[Any]):
    """Every worker of this process appends to ``items``; ``first`` is when the first came."""

    def __init__(self) -> None:
        self.items: list[Any] = []
        self.first: float | None = None

    def build(self, step_id: str, worker_index: int, worker_count: int) -> _CollectPartition:
        return _CollectPartition(self)


class _PartFilePartition(StatelessSinkPartition[str]):
    def __init__(self, path: str) -> None:
        self.file = open(path, "w", encoding="utf-8")

    def write_batch(self, items: list[str]) -> None:
        self.file.writelines(item + "\n" for item in items)

    def close(self) -> None:
        self.file.flush()
        os.fsync(self.file.fileno())
        self.file.close()


class PartFileSink(DynamicSink[str]):
    """Lines into ``part-<worker>`` under ``directory``, one file per worker."""

    def __init__(self, directory: str) -> None:
        self.directory = directory

    def build(self, step_id: str, worker_index: int, worker_count: int
              ) -> _PartFilePartition:
        return _PartFilePartition(os.path.join(self.directory, f"part-{worker_index}"))


def _running(add: Callable[[Any, Any], Any]) -> Callable[[Any, Any], tuple[Any, Any]]:
    def mapper(state: Any, value: Any) -> tuple[Any, Any]:
        acc = value if state is None else add(state, value)
        return acc, acc
    return mapper


def _str_key(t: Any) -> str:
    return str(f.first_field(t))


def keyed_count(n: int, workers: int, sink: CollectSink) -> Dataflow:
    flow = Dataflow("keyed_count")
    pairs = op.map("pair", op.input("numbers", flow, NumberSource(n, workers)), f.to_pair)
    counts = op.stateful_map("count", op.key_on("key", pairs, _str_key), _running(f.add_counts))
    final = op.filter_value("final", counts, f.final_counts_only(n))
    op.output("out", op.key_rm("unkey", final), sink)
    return flow


def word_count(text_dir: str, out_dir: str) -> Dataflow:
    flow = Dataflow("word_count")
    words = op.flat_map("split", op.input("text", flow, DirSource(Path(text_dir))), f.split)
    pairs = op.map("pair", words, f.to_word_pair)
    counts = op.stateful_map("count", op.key_on("key", pairs, f.first_field),
                             _running(f.add_counts))
    lines = op.map("format", op.key_rm("unkey", counts), f.format_count)
    op.output("out", lines, PartFileSink(out_dir))
    return flow


def window_count(n: int, workers: int, sink: CollectSink) -> Dataflow:
    flow = Dataflow("window_count")
    events = op.map("event", op.input("numbers", flow, NumberSource(n, 1)), f.to_event)
    assigner = f.EventTimestamp()
    clock = win.EventClock(
        lambda t: EPOCH + timedelta(milliseconds=assigner.extract_timestamp(t, 0)),
        wait_for_system_duration=timedelta(milliseconds=f.OUT_OF_ORDERNESS_MS))
    windower = win.TumblingWindower(length=timedelta(milliseconds=f.WINDOW_MS), align_to=EPOCH)
    counted = win.count_window("count", events, clock, windower, _str_key)
    op.output("out", op.map("label", counted.down, _label_window), sink)
    return flow


def _label_window(item: tuple[str, tuple[int, int]]) -> tuple[int, int, int]:
    key, (window_id, count) = item
    return int(key), window_id * f.WINDOW_MS, count


class _DailyCountLogic(op.StatefulLogic[Any, tuple[int, int], tuple[int, int]]):
    """Counts a key's records; reports ``(day start, count)`` at the end of input."""

    def __init__(self, assigner: f.EventTimestamp, resume: tuple[int, int] | None) -> None:
        self.assigner = assigner
        self.day_end, self.count = resume if resume is not None else (-1, 0)

    def on_item(self, value: Any) -> tuple[list[tuple[int, int]], bool]:
        timestamp = self.assigner.extract_timestamp(value, 0)
        if not self.count:
            self.day_end = f.end_of_day(timestamp)
        self.count += 1
        return [], op.StatefulLogic.RETAIN

    def on_eof(self) -> tuple[list[tuple[int, int]], bool]:
        return [(self.day_end + 1 - f.DAY_MS, self.count)], op.StatefulLogic.DISCARD

    def snapshot(self) -> tuple[int, int]:
        return self.day_end, self.count


def timer_count(n: int, workers: int, sink: CollectSink) -> Dataflow:
    flow = Dataflow("timer_count")
    events = op.map("event", op.input("numbers", flow, NumberSource(n, workers)), f.to_event)
    assigner = f.EventTimestamp()
    daily = op.stateful("daily", op.key_on("key", events, _str_key),
                        lambda resume: _DailyCountLogic(assigner, resume))
    op.output("out", op.map("label", daily, lambda kv: (int(kv[0]), *kv[1])), sink)
    return flow


def run(flow: Dataflow, workers_per_process: int, process_id: int, addresses: list[str]
        ) -> None:
    """Runs ``flow`` here: one worker in this thread, several as threads of this process,
    or this process's part of a cluster of processes (``addresses``)."""
    if addresses:
        cluster_main(flow, addresses, process_id, worker_count_per_proc=workers_per_process)
    elif workers_per_process == 1:
        run_main(flow)
    else:
        cluster_main(flow, [], 0, worker_count_per_proc=workers_per_process)
