"""The four ported jobs, written as a PyFlink user writes them, on flintlock's public API.

Each builder takes a fresh ``StreamExecutionEnvironment`` (embedded Spark, the defaults a user
gets, no checkpointing) and ``typed``: with it, the job declares its types as PyFlink jobs do
(``output_type``, ``key_type``, the state's and accumulator's types); without, every
declaration is left out and nothing else changes.

* (a) ``keyed_count``: ``NumberSequenceSource(0, n-1)`` → ``map`` → ``key_by`` → ``reduce``
  (running count) → ``filter`` (final counts only) → ``execute_and_collect``;
* (b) ``word_count``: ``FileSource`` (text lines) → ``flat_map`` (split) → ``map`` → ``key_by``
  → ``reduce`` (running count) → ``map`` (format) → ``FileSink``;
* (c) ``window_count``: numbers → ``map`` (event) → bounded-out-of-orderness watermarks →
  ``key_by`` → tumbling 10 s event-time windows → ``aggregate`` (count, labelled by a
  ``ProcessWindowFunction``) → ``execute_and_collect``;
* (d) ``timer_count``: numbers → ``map`` (event) → the same watermarks → ``key_by`` →
  ``process`` (``DailyCount``: a ``ValueState`` and one event-time timer per key) →
  ``execute_and_collect``.

``run`` times ``execute()`` / ``execute_and_collect()`` from the call to the end and to the
first record that reaches the caller (the first item of the iterator; for the ``FileSink``
job, whose files are committed when it ends, the end).
"""

from __future__ import annotations

import time
from typing import Any

from benchmarks.ported import functions as f
from flintlock.common import Duration, Encoder, Types, WatermarkStrategy
from flintlock.datastream import DataStream, StreamExecutionEnvironment
from flintlock.datastream.connectors.file_system import FileSink, FileSource, StreamFormat
from flintlock.datastream.connectors.number_seq import NumberSequenceSource
from flintlock.datastream.window import TumblingEventTimeWindows

LONG_PAIR = Types.TUPLE([Types.LONG(), Types.LONG()])
LONG_TRIPLE = Types.TUPLE([Types.LONG(), Types.LONG(), Types.LONG()])
WORD_PAIR = Types.TUPLE([Types.STRING(), Types.LONG()])


def _types(typed: bool, **declared: Any) -> dict[str, Any]:
    """The declarations of the typed variant; none for the undeclared one."""
    return declared if typed else {}


def _numbers(env: StreamExecutionEnvironment, n: int) -> DataStream:
    return env.from_source(NumberSequenceSource(0, n - 1), WatermarkStrategy.no_watermarks(),
                           "numbers")


def keyed_count(env: StreamExecutionEnvironment, n: int, typed: bool) -> DataStream:
    return (_numbers(env, n)
            .map(f.to_pair, **_types(typed, output_type=LONG_PAIR))
            .key_by(f.first_field, **_types(typed, key_type=Types.LONG()))
            .reduce(f.add_counts)
            .filter(f.final_counts_only(n)))


def word_count(env: StreamExecutionEnvironment, text_dir: str, out_dir: str, typed: bool
               ) -> None:
    source = FileSource.for_record_stream_format(StreamFormat.text_line_format(),
                                                 text_dir).build()
    sink = FileSink.for_row_format(out_dir, Encoder.simple_string_encoder()).build()
    (env.from_source(source, WatermarkStrategy.no_watermarks(), "text")
        .flat_map(f.split, **_types(typed, output_type=Types.STRING()))
        .map(f.to_word_pair, **_types(typed, output_type=WORD_PAIR))
        .key_by(f.first_field, **_types(typed, key_type=Types.STRING()))
        .reduce(f.add_counts)
        .map(f.format_count, **_types(typed, output_type=Types.STRING()))
        .sink_to(sink))


def _events(env: StreamExecutionEnvironment, n: int, typed: bool) -> DataStream:
    watermarks = (WatermarkStrategy
                  .for_bounded_out_of_orderness(Duration.of_millis(f.OUT_OF_ORDERNESS_MS))
                  .with_timestamp_assigner(f.EventTimestamp()))
    return (_numbers(env, n)
            .map(f.to_event, **_types(typed, output_type=LONG_PAIR))
            .assign_timestamps_and_watermarks(watermarks))


def window_count(env: StreamExecutionEnvironment, n: int, typed: bool) -> DataStream:
    return (_events(env, n, typed)
            .key_by(f.first_field, **_types(typed, key_type=Types.LONG()))
            .window(TumblingEventTimeWindows.of(Duration.of_millis(f.WINDOW_MS)))
            .aggregate(f.CountEvents(), f.LabelWindow(),
                       **_types(typed, accumulator_type=Types.LONG(), output_type=LONG_TRIPLE)))


def timer_count(env: StreamExecutionEnvironment, n: int, typed: bool) -> DataStream:
    if n > f.MAX_EVENTS:
        raise ValueError(f"timer_count keeps its events in one day: n <= {f.MAX_EVENTS}")
    return (_events(env, n, typed)
            .key_by(f.first_field, **_types(typed, key_type=Types.LONG()))
            .process(f.DailyCount(typed), **_types(typed, output_type=LONG_TRIPLE)))


def _collect(stream: DataStream, name: str) -> tuple[float, float | None, list[Any]]:
    items: list[Any] = []
    first: float | None = None
    started = time.perf_counter()
    with stream.execute_and_collect(name) as results:
        for item in results:
            if first is None:
                first = time.perf_counter() - started
            items.append(item)
    return time.perf_counter() - started, first, items


def run(job: str, n: int, parallelism: int, typed: bool, text_dir: str, out_dir: str
        ) -> tuple[float, float | None, list[Any]]:
    """Builds ``job`` in a new environment and runs it: (wall s, first record s, items)."""
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(parallelism)
    if job == "word_count":
        word_count(env, text_dir, out_dir, typed)
        started = time.perf_counter()
        env.execute(job)
        wall = time.perf_counter() - started
        return wall, wall, []
    builders = {"keyed_count": keyed_count, "window_count": window_count,
                "timer_count": timer_count}
    return _collect(builders[job](env, n, typed), job)
