"""The built-in aggregate functions whose retraction needs more than a number: MIN/MAX,
FIRST_VALUE/LAST_VALUE, LISTAGG and COLLECT over an updating input.

Same protocol as ``aggregates`` (accumulator: a picklable list changed in place). None has an
inline form: the group aggregation calls their methods.

* MIN/MAX with retraction keep the current extreme, the number of distinct values and a
  multiset ``{value: count}`` (Flink's ``MaxWithRetractAggFunction``): retracting the last
  copy of the extreme rescans the multiset for the next one.
* FIRST_VALUE/LAST_VALUE with retraction keep the non-null values in arrival order; retracting
  a value removes its earliest copy. Flink orders them by the wall-clock millisecond of
  arrival, ties kept in arrival order, which is the same order.
* LISTAGG keeps the values in order; a retraction removes the first equal value, or (Flink's
  ``ListAggWithRetractAggFunction``) is remembered when there is none.
* COLLECT is a multiset ``{value: count}``; its value is a new dict (never null).
"""

from __future__ import annotations

from typing import Any

from flintlock.datastream.changelog.aggregates import BuiltInAggregate


class MaxWithRetract(BuiltInAggregate):
    """MAX(x) over an updating input. Accumulator: [max, distinct values, {value: count}]."""

    name = "MAX"

    def _better(self, a: Any, b: Any) -> bool:
        return bool(a > b)

    def create_accumulator(self) -> list[Any]:
        return [None, 0, {}]

    def accumulate(self, acc: list[Any], value: Any) -> None:
        if value is None:
            return
        if acc[1] == 0 or self._better(value, acc[0]):
            acc[0] = value
        counts = acc[2]
        count = counts.get(value, 0) + 1
        if count == 0:
            del counts[value]
        else:
            counts[value] = count
        if count == 1:
            acc[1] += 1

    def retract(self, acc: list[Any], value: Any) -> None:
        if value is None:
            return
        counts = acc[2]
        count = counts.get(value, 0) - 1
        if count != 0:
            counts[value] = count
            return
        del counts[value]
        acc[1] -= 1
        if acc[1] == 0:
            acc[0] = None
        elif value == acc[0]:
            self._rescan(acc)

    def _rescan(self, acc: list[Any]) -> None:
        best: Any = None
        for candidate in acc[2]:
            if best is None or self._better(candidate, best):
                best = candidate
        acc[0] = best
        if best is None:
            acc[1] = 0

    def _merge_one(self, acc: list[Any], other: list[Any]) -> None:
        for value, count in other[2].items():
            step = self.accumulate if count > 0 else self.retract
            for _ in range(abs(count)):
                step(acc, value)

    def get_value(self, acc: list[Any]) -> Any:
        return acc[0] if acc[1] > 0 else None


class MinWithRetract(MaxWithRetract):
    """MIN(x) over an updating input."""

    name = "MIN"

    def _better(self, a: Any, b: Any) -> bool:
        return bool(a < b)


class FirstValueWithRetract(BuiltInAggregate):
    """FIRST_VALUE(x) over an updating input. Accumulator: [values in arrival order]."""

    name = "FIRST_VALUE"

    def create_accumulator(self) -> list[Any]:
        return [[]]

    def accumulate(self, acc: list[Any], value: Any) -> None:
        if value is not None:
            acc[0].append(value)

    def retract(self, acc: list[Any], value: Any) -> None:
        if value is not None:
            values = acc[0]
            if value in values:
                values.remove(value)

    def _merge_one(self, acc: list[Any], other: list[Any]) -> None:
        acc[0].extend(other[0])

    def get_value(self, acc: list[Any]) -> Any:
        values = acc[0]
        return values[0] if values else None


class LastValueWithRetract(FirstValueWithRetract):
    """LAST_VALUE(x) over an updating input."""

    name = "LAST_VALUE"

    def get_value(self, acc: list[Any]) -> Any:
        values = acc[0]
        return values[-1] if values else None


class ListAgg(BuiltInAggregate):
    """LISTAGG(x[, separator]) (insert-only or updating input): the non-null values joined by
    the separator (',' by default; the latest one given is used; a row whose separator is
    null is skipped), null when there are none. Accumulator: [values, separator, retractions
    of values that were not present (kept for ``merge``, as Flink does)]."""

    name = "LISTAGG"

    def __init__(self, separator: str = ",") -> None:
        self.separator = separator

    def create_accumulator(self) -> list[Any]:
        return [[], self.separator, []]

    def accumulate(self, acc: list[Any], value: Any, *separator: Any) -> None:
        if value is None:
            return
        if separator:
            if separator[0] is None:  # LISTAGG(x, sep) skips a row whose separator is null
                return
            acc[1] = separator[0]
        acc[0].append(value)

    def retract(self, acc: list[Any], value: Any, *separator: Any) -> None:
        if value is None or (separator and separator[0] is None):
            return
        values = acc[0]
        if value in values:
            values.remove(value)
        else:
            acc[2].append(value)

    def _merge_one(self, acc: list[Any], other: list[Any]) -> None:
        acc[1] = other[1]
        acc[0].extend(other[0])
        for value in other[2]:
            self.retract(acc, value)

    def get_value(self, acc: list[Any]) -> Any:
        values = acc[0]
        return acc[1].join(values) if values else None


class Collect(BuiltInAggregate):
    """COLLECT(x): the multiset of the non-null values, as {value: count}."""

    name = "COLLECT"

    def create_accumulator(self) -> list[Any]:
        return [{}]

    def accumulate(self, acc: list[Any], value: Any) -> None:
        if value is not None:
            counts = acc[0]
            counts[value] = counts.get(value, 0) + 1

    def retract(self, acc: list[Any], value: Any) -> None:
        if value is not None:
            counts = acc[0]
            count = counts.get(value, 0) - 1
            if count == 0:
                del counts[value]
            else:
                counts[value] = count

    def _merge_one(self, acc: list[Any], other: list[Any]) -> None:
        for value, count in other[0].items():
            total = acc[0].get(value, 0) + count
            if total == 0:
                acc[0].pop(value, None)
            else:
                acc[0][value] = total

    def get_value(self, acc: list[Any]) -> dict[Any, int]:
        return {value: count for value, count in acc[0].items() if count > 0}
