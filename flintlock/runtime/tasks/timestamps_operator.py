"""The operator of ``DataStream.assign_timestamps_and_watermarks(strategy)``.

It gives every record the timestamp the strategy's assigner extracts (the record's previous
timestamp is passed to the assigner, ``NO_TIMESTAMP`` when it had none) and generates
watermarks with a ``WatermarkEmitter``, periodically (``pipeline.auto-watermark-interval``).
Watermarks from upstream are dropped — this operator defines event time from here on — except
the maximum one, which ends event time when a bounded input ends; upstream watermark status is
dropped too (idleness comes from this strategy's ``with_idleness``). With a SQL table's
watermark (``WatermarkStrategy.for_watermark_expression``) a watermark may also be due after a
record within a batch; the batch is split there so the watermark follows that record, as
Flink's WatermarkAssignerOperator emits it. Belongs to the task thread.
"""

from __future__ import annotations

from typing import Any

from flintlock.common.operator_spec import OperatorSpec
from flintlock.runtime.network.event_time import MAX_WATERMARK, TimestampedBatch
from flintlock.runtime.tasks.operator import StreamOperator
from flintlock.runtime.tasks.watermarks import PeriodicEmission, WatermarkEmitter

DEFAULT_INTERVAL_MS = 200


class TimestampsAndWatermarksOperator(StreamOperator):
    """Assigns timestamps and emits watermarks (see the module docstring)."""

    def __init__(self, spec: OperatorSpec) -> None:
        if spec.watermark_strategy is None:
            raise ValueError("assign_timestamps_and_watermarks needs a watermark strategy")
        self.spec = spec
        self._strategy = spec.watermark_strategy

    def open(self) -> None:
        timers = self.context.timers
        interval = self.context.environment.auto_watermark_interval_ms
        self._emitter = WatermarkEmitter(self._strategy, self, timers.now_ms, interval)
        self._periodic = PeriodicEmission(timers, interval, self._emitter.on_periodic_emit)
        if self._emitter.is_periodic:
            self._periodic.start()

    def process_batch(self, records: list[Any]) -> None:
        previous = records.timestamps if type(records) is TimestampedBatch else None
        timestamps = self._emitter.timestamps_of(records, previous)
        if self._emitter.is_eager:  # a SQL watermark: due watermarks split the batch
            start = 0
            for end, watermark in self._emitter.eager_watermarks(records, timestamps):
                self.output.collect_batch(TimestampedBatch(records[start:end],
                                                           timestamps[start:end]))
                super().emit_watermark(watermark)
                start = end
            if start < len(records):
                self.output.collect_batch(TimestampedBatch(records[start:],
                                                           timestamps[start:]))
            return
        self._emitter.on_timestamps(timestamps)
        self.output.collect_batch(TimestampedBatch(records, timestamps))

    def process_watermark(self, timestamp: int) -> None:
        if timestamp >= MAX_WATERMARK:
            self._periodic.stop()
            self._emitter.end(MAX_WATERMARK)

    def process_watermark_status(self, idle: bool) -> None:
        pass

    def end_input(self, input_index: int = 0) -> None:
        self._periodic.stop()
        self._emitter.end(MAX_WATERMARK)

    def close(self) -> None:
        periodic = getattr(self, "_periodic", None)
        if periodic is not None:
            periodic.stop()

    # -- WatermarkOutput (for the emitter) ------------------------------------------------

    def emit_watermark(self, timestamp: int) -> None:
        super().emit_watermark(timestamp)

    def emit_watermark_status(self, idle: bool) -> None:
        self.output.emit_watermark_status(idle)
        for side in self.context.side_outputs.values():
            side.emit_watermark_status(idle)
