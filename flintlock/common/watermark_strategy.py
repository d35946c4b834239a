"""``WatermarkStrategy`` and ``TimestampAssigner`` with PyFlink's builder methods.

Pure data: a strategy records which watermark generator to use (none, monotonous,
bounded out-of-orderness), an optional timestamp assigner and an optional idle timeout. Sources
carry it in their operator description (``flintlock.common.operator_spec``). Event time —
watermark generation and event-time timers — is a later capability of the runtime; until then
the runtime may ignore everything but ``no_watermarks`` (see docs/api.md).

Immutable: every builder method returns a new strategy.
"""

from __future__ import annotations

import abc
import enum
from dataclasses import dataclass, replace
from typing import Any

from flintlock.common.time import Duration


class TimestampAssigner(abc.ABC):
    """Extracts an event timestamp (epoch milliseconds) from a record."""

    @abc.abstractmethod
    def extract_timestamp(self, value: Any, record_timestamp: int) -> int: ...


class WatermarkGeneratorKind(enum.Enum):
    NONE = "none"
    MONOTONOUS = "monotonous"
    BOUNDED_OUT_OF_ORDERNESS = "bounded-out-of-orderness"
    EXPRESSION = "expression"
    """flintlock's, for SQL's ``WATERMARK FOR ts AS expr``: each record's watermark is
    ``watermark_expression(record)`` (see ``WatermarkStrategy.for_watermark_expression``)."""


@dataclass(frozen=True)
class WatermarkStrategy:
    """How a source (or, later, an operator) assigns timestamps and emits watermarks."""

    generator: WatermarkGeneratorKind = WatermarkGeneratorKind.NONE
    max_out_of_orderness_ms: int = 0
    timestamp_assigner: TimestampAssigner | None = None
    idle_timeout_ms: int | None = None
    watermark_expression: Any = None
    """For ``EXPRESSION``: ``record -> int | None``, the watermark a record allows."""

    @staticmethod
    def no_watermarks() -> WatermarkStrategy:
        return WatermarkStrategy(WatermarkGeneratorKind.NONE)

    @staticmethod
    def for_monotonous_timestamps() -> WatermarkStrategy:
        return WatermarkStrategy(WatermarkGeneratorKind.MONOTONOUS)

    @staticmethod
    def for_bounded_out_of_orderness(max_out_of_orderness: Duration) -> WatermarkStrategy:
        millis = _millis(max_out_of_orderness, "max_out_of_orderness")
        return WatermarkStrategy(WatermarkGeneratorKind.BOUNDED_OUT_OF_ORDERNESS, millis)

    @staticmethod
    def for_watermark_expression(watermark_expression: Any) -> WatermarkStrategy:
        """Not in PyFlink: the strategy of a SQL table's ``WATERMARK FOR ts AS expr``, as
        Flink's WatermarkAssignerOperator runs it. The watermark is the largest value
        ``watermark_expression(record)`` returned so far, starting from 0 (None is skipped);
        it is emitted at once, before the next record, when it passed the last one emitted
        by more than ``pipeline.auto-watermark-interval``, and otherwise periodically."""
        if not callable(watermark_expression):
            raise TypeError("for_watermark_expression needs a callable record -> int, got "
                            f"{watermark_expression!r}")
        return WatermarkStrategy(WatermarkGeneratorKind.EXPRESSION,
                                 watermark_expression=watermark_expression)

    def with_timestamp_assigner(self, timestamp_assigner: TimestampAssigner) -> WatermarkStrategy:
        if not isinstance(timestamp_assigner, TimestampAssigner):
            raise TypeError("with_timestamp_assigner needs a TimestampAssigner, got "
                            f"{timestamp_assigner!r}")
        return replace(self, timestamp_assigner=timestamp_assigner)

    def with_idleness(self, idle_timeout: Duration) -> WatermarkStrategy:
        return replace(self, idle_timeout_ms=_millis(idle_timeout, "idle_timeout"))

    def with_watermark_alignment(self, *args: Any, **kwargs: Any) -> WatermarkStrategy:
        raise NotImplementedError("watermark alignment is not supported yet (issue #5)")


def _millis(duration: Duration, what: str) -> int:
    if not isinstance(duration, Duration):
        raise TypeError(f"{what} must be a Duration, got {duration!r}")
    millis = duration.to_milliseconds()
    if millis < 0:
        raise ValueError(f"{what} must not be negative, got {duration!r}")
    return millis
