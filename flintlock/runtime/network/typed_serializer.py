"""The serializer of an edge whose records have a declared type, and the check at a chain's edge.

Declared types are checked where it is cheap (docs/decisions.md, "Declared types"): where a
batch leaves its chain. Into a record writer the typed codec (``typed_codec``) checks while it
encodes; into a chained sink ``check_batch`` runs the same codec without keeping the bytes.
Either way a record that does not fit raises ``RecordTypeMismatchError`` naming the operator
that produced it, the declared type and the value; the C routine's own error is its cause.

Types the codec has no layout for are pickled and checked record by record with the type's
compiled predicate, after PyFlink's implicit conversions (``TypeInformation.coerce``: a tuple
returned for a ROW becomes a ``Row``). A batch that fits its type but not the codec's layout
(none is known; the path exists so that one could never be lost) is pickled as well.

Owned by the writer that holds it (called under the writer's lock) or by the task thread.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from flintlock.common.changelog_rows import ChangelogRowTypeInfo
from flintlock.common.typeinfo import PickledBytesTypeInfo, TupleTypeInfo, TypeInformation
from flintlock.runtime.network.changelog_serializer import ChangelogRowSerializer
from flintlock.runtime.network.event_time import StampedRun, TimestampedBatch
from flintlock.runtime.network.serialization import BatchSerializer, PickleBatchSerializer
from flintlock.runtime.network.typed_codec import (
    ENCODE_ERRORS,
    compile_plan,
    decode_chunk,
    encode_chunk,
)

_TUPLE = frozenset({tuple})

WRONG_TYPE_ERRORS = (TypeError, AttributeError, IndexError, KeyError, ValueError)
"""What user code (a chained function, a key selector) typically raises when handed a record
of the wrong type: the errors after which ``diagnose`` looks at the batch."""


def serializer_for(type_info: TypeInformation | None, operator_name: str) -> BatchSerializer:
    """The writer's serializer for records of ``type_info`` produced by ``operator_name``."""
    if isinstance(type_info, ChangelogRowTypeInfo):
        return ChangelogRowSerializer()
    if type_info is None or isinstance(type_info, PickledBytesTypeInfo):
        return PickleBatchSerializer()
    return TypedBatchSerializer(type_info, operator_name)


class TypedBatchSerializer(PickleBatchSerializer):
    """Encodes batches of one declared type with its codec plan, or pickles them checked."""

    __slots__ = ("_coerce", "_operator", "_plan", "_predicate", "_tuples", "_type")

    def __init__(self, type_info: TypeInformation, operator_name: str,
                 protocol: int = 5) -> None:
        super().__init__(protocol)
        self._type = type_info
        self._operator = operator_name
        self._plan = compile_plan(type_info)
        self._predicate = type_info.predicate()
        self._coerce = type_info.coerce if type_info.need_conversion() else None
        self._tuples = isinstance(type_info, TupleTypeInfo)  # a list arrives as a tuple

    @property
    def type_info(self) -> TypeInformation:
        return self._type

    def dumps(self, records: list[Any]) -> bytes | memoryview:
        values: Sequence[Any] = records
        run = None
        if records and type(records[-1]) is StampedRun:
            last = records[-1]
            run, values = (last.values, last.timestamps), records[:-1]
        if self._plan is not None:
            try:
                return encode_chunk(self._plan, values, run)
            except ENCODE_ERRORS as error:
                checked = self._checked(values, error)
                if run is not None:
                    checked.append(StampedRun(self._checked(run[0], error), list(run[1])))
                return super().dumps(checked)
        checked = self._checked(values)
        if run is not None:
            checked.append(StampedRun(self._checked(run[0]), list(run[1])))
        return super().dumps(checked)

    def check_batch(self, records: list[Any]) -> list[Any]:
        """``records`` checked against the type, converted where PyFlink converts (at a chain's
        edge into a sink): decoded again only when that can change something (a FLOAT/DOUBLE
        field, or a TUPLE batch holding something other than tuples); a ``TimestampedBatch``
        keeps its timestamps."""
        plan = self._plan
        if plan is not None and plan.check is not None and not plan.converts:
            try:
                plan.check(records)
            except ENCODE_ERRORS as error:
                converted = self._checked(records, error)
            else:
                return records
        elif plan is not None:
            try:
                chunk = encode_chunk(plan, records)
            except ENCODE_ERRORS as error:
                converted = self._checked(records, error)
            else:
                if not plan.converts and (
                        not self._tuples or set(map(type, records)) <= _TUPLE):
                    return records
                converted = decode_chunk(chunk)[0]
        else:
            converted = self._checked(records)
            if self._coerce is None:
                return records
        if type(records) is TimestampedBatch:
            return TimestampedBatch(converted, records.timestamps)
        return converted

    def diagnose(self, records: Sequence[Any], error: BaseException) -> None:
        """User code raised ``error`` on ``records``: if one of them does not fit the type
        (after PyFlink's conversions, so a list for a TUPLE fits), raise that
        ``RecordTypeMismatchError`` from ``error`` instead; otherwise return."""
        self._checked(records, error)

    def _checked(self, values: Sequence[Any], cause: BaseException | None = None) -> list[Any]:
        """``values`` after PyFlink's implicit conversions, each checked by the predicate;
        the first that fails raises ``RecordTypeMismatchError`` (from ``cause``)."""
        coerce, fits = self._coerce, self._predicate
        converted = [coerce(value) for value in values] if coerce is not None else list(values)
        if all(map(fits, converted)):
            return converted
        for value in converted:
            if not fits(value):
                try:
                    self._type._reject(value, self._operator)
                except Exception as mismatch:
                    raise mismatch from cause
        raise AssertionError("unreachable: a value failed the predicate")  # pragma: no cover
