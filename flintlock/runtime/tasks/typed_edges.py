"""Declared output types inside an operator chain: checked at its edges, never per record.

An operator's declared ``output_type`` is checked where its batch leaves the chain
(docs/decisions.md, "Declared types"): the record writer's typed codec checks what crosses an
exchange (``runtime.network.typed_serializer``), and ``SinkEdgeOutput`` checks what enters a
chained sink, converting as PyFlink does (an int for a DOUBLE arrives as a float, a tuple for a
ROW as a ``Row``). Between two chained operators nothing runs per record:
``DiagnosingOutput`` only looks at a batch when the successor raised on it, and then reports a
record that does not fit its declared type as ``RecordTypeMismatchError`` (the successor's
error as its cause) instead of a puzzling error from inside the successor.

One exception keeps its old cost because PyFlink code relies on it: a ROW type converts tuples
and dicts into ``Row`` objects before a chained successor sees them, skipped (one type scan in C
per batch) when every record already is a ``Row``.

Everything belongs to the task thread.
"""

from __future__ import annotations

from typing import Any

from flintlock.common.typeinfo import (
    PickledBytesTypeInfo,
    RecordTypeMismatchError,
    RowTypeInfo,
    TypeInformation,
)
from flintlock.common.types import Row
from flintlock.runtime.network.event_time import TimestampedBatch
from flintlock.runtime.network.typed_serializer import WRONG_TYPE_ERRORS, TypedBatchSerializer
from flintlock.runtime.tasks.operator import Output


class SinkEdgeOutput:
    """Checks (and converts) each batch against the producer's declared type before a chained
    sink gets it."""

    __slots__ = ("_check", "_output")

    def __init__(self, output: Output, type_info: TypeInformation, operator_name: str) -> None:
        self._output = output
        self._check = TypedBatchSerializer(type_info, operator_name).check_batch

    def collect_batch(self, records: list[Any]) -> None:
        self._output.collect_batch(self._check(records))

    def emit_watermark(self, timestamp: int) -> None:
        self._output.emit_watermark(timestamp)

    def emit_watermark_status(self, idle: bool) -> None:
        self._output.emit_watermark_status(idle)


class DiagnosingOutput:
    """Hands batches to a chained successor unchecked; if the successor raises, reports the
    first record of the batch that does not fit the declared type instead."""

    __slots__ = ("_coerce", "_collect", "_diagnose", "_output")

    def __init__(self, output: Output, type_info: TypeInformation, operator_name: str) -> None:
        self._output = output
        self._collect = output.collect_batch
        self._diagnose = TypedBatchSerializer(type_info, operator_name).diagnose
        self._coerce = type_info.coerce if isinstance(type_info, RowTypeInfo) else None

    def collect_batch(self, records: list[Any]) -> None:
        if self._coerce is not None:
            records = self._as_rows(records)
        try:
            self._collect(records)
        except RecordTypeMismatchError:
            raise
        except WRONG_TYPE_ERRORS as error:
            self._diagnose(records, error)  # judged as an edge would, after the conversions
            raise

    def _as_rows(self, records: list[Any]) -> list[Any]:
        if {type(record) for record in records} <= {Row}:
            return records
        coerce = self._coerce
        assert coerce is not None
        converted = [coerce(record) for record in records]
        if type(records) is TimestampedBatch:
            return TimestampedBatch(converted, records.timestamps)
        return converted

    def emit_watermark(self, timestamp: int) -> None:
        self._output.emit_watermark(timestamp)

    def emit_watermark_status(self, idle: bool) -> None:
        self._output.emit_watermark_status(idle)


def typed_edge(output: Output, type_info: object, operator_name: str, into_sink: bool
               ) -> Output:
    """``output`` wrapped for the producer's declared ``type_info`` (as is when none)."""
    if not isinstance(type_info, TypeInformation) or isinstance(type_info, PickledBytesTypeInfo):
        return output
    if into_sink:
        return SinkEdgeOutput(output, type_info, operator_name)
    return DiagnosingOutput(output, type_info, operator_name)
