"""Top-N over an updating input: Flink's ``RetractableTopNFunction``.

State per partition: a ``ValueState`` "sorted-map" holding [sorted sort keys, {sort key:
number of rows}] and a ``MapState`` "data-state" from sort key to its rows (value tuples) in
arrival order. Every row is kept — a retraction can bring a row back into the top N.

An accumulate message (+I, +U) counts its key, emits, then is appended to its key's rows:

* with the row number: as the append-only variant, the rows from its position down to
  ``rank_end`` shift one rank (``-U``/``+U`` per rank) and ``+I`` the last if the top was not
  full;
* without: the row that falls to rank ``rank_end + 1`` (if any) is emitted as ``-D``, then
  the new row as ``+I`` when its rank is within the range.

A retract message (-U, -D) is looked up among its key's rows (the first equal one, kind
ignored) and removed, then its key's count goes down:

* with the row number: every row after it up to ``rank_end`` moves one rank up
  (``-U[previous occupant, r]``, ``+U[new occupant, r]``) and the last rank still within the
  range, now empty, gets ``-D``;
* without: ``-D`` for the row (if within the range), then ``+I`` for the row that moves up
  into rank ``rank_end``.

Constructor arguments: see ``topn_base``. The task thread owns the function once opened.
"""

from __future__ import annotations

from bisect import bisect_left, insort
from typing import Any

from flintlock.common.state import MapStateDescriptor, ValueStateDescriptor
from flintlock.datastream.changelog.rows import INSERT, UPDATE_AFTER
from flintlock.datastream.changelog.topn_base import TopNFunction
from flintlock.datastream.functions import RuntimeContext


class RetractableTopNFunction(TopNFunction):
    """ROW_NUMBER Top-N over an updating input; see the module docstring."""

    def open(self, runtime_context: RuntimeContext) -> None:
        self._sorted = runtime_context.get_state(ValueStateDescriptor("sorted-map"))
        self._data = runtime_context.get_map_state(MapStateDescriptor("data-state", None, None))

    def process_element(self, value: Any, ctx: Any) -> list[Any]:
        sorted_map = self._sorted.value()
        if sorted_map is None:
            sorted_map = [[], {}]
        keys, counts = sorted_map
        key = self.sort_key(value)
        values = tuple(value._values)
        kind = value._row_kind
        out: list[Any] = []
        if kind is INSERT or kind is UPDATE_AFTER:
            count = counts.get(key, 0)
            if count == 0:
                insort(keys, key)
            counts[key] = count + 1
            if self.numbered:
                self._emit_with_row_number(sorted_map, key, values, out)
            else:
                self._emit_without_row_number(sorted_map, key, values, out)
            rows = self._data.get(key)
            self._data.put(key, [*rows, values] if rows else [values])
        else:
            self._retract(sorted_map, key, values, out)
        if keys:
            self._sorted.update(sorted_map)
        else:
            self._sorted.clear()
        return out

    def _retract(self, sorted_map: list[Any], key: Any, values: tuple[Any, ...],
                 out: list[Any]) -> None:
        if self.numbered:
            removed = self._retract_with_row_number(sorted_map, key, values, out)
        else:
            removed = self._retract_without_row_number(sorted_map, key, values, out)
        keys, counts = sorted_map
        count = counts.get(key)
        if count is not None:
            if count == 1:
                del counts[key]
                del keys[bisect_left(keys, key)]
            else:
                counts[key] = count - 1
        if not removed:
            rows = self._data.get(key)
            if rows and values in rows:
                rows = list(rows)
                rows.remove(values)
                self._put_rows(key, rows)

    def _put_rows(self, key: Any, rows: list[Any]) -> None:
        if rows:
            self._data.put(key, rows)
        else:
            self._data.remove(key)

    # -- accumulate ------------------------------------------------------------------------

    def _emit_with_row_number(self, sorted_map: list[Any], key: Any, values: tuple[Any, ...],
                              out: list[Any]) -> None:
        keys, counts = sorted_map
        end = self.rank_end
        rank, current, found, position = 0, values, False, 0
        while position < len(keys) and rank <= end:
            entry = keys[position]
            position += 1
            if not found and entry == key:
                rank += counts[entry]
                found = True
            elif found:
                rows = self._data.get(entry) or []
                index = 0
                while index < len(rows) and rank <= end:
                    previous = rows[index]
                    self.update(out, previous, current, rank)
                    current, rank, index = previous, rank + 1, index + 1
            else:
                rank += counts[entry]
        if rank <= end:
            self.insert(out, current, rank)

    def _emit_without_row_number(self, sorted_map: list[Any], key: Any,
                                 values: tuple[Any, ...], out: list[Any]) -> None:
        keys, counts = sorted_map
        end = self.rank_end
        rank, found, collect, to_delete = 0, False, False, None
        for entry in keys:
            if rank > end:
                break
            if not found and entry == key:
                rank += counts[entry]
                collect = self._in_range(rank)
                found = True
            elif found:
                last = rank + counts[entry]
                if last <= end:
                    rank = last
                else:
                    rows = self._data.get(entry) or []
                    to_delete = rows[end - rank]
                    break
            else:
                rank += counts[entry]
        if to_delete is not None:
            self.delete(out, to_delete, 1)
        if collect:
            self.insert(out, values, 1)

    # -- retract ---------------------------------------------------------------------------

    def _retract_with_row_number(self, sorted_map: list[Any], key: Any,
                                 values: tuple[Any, ...], out: list[Any]) -> bool:
        keys, counts = sorted_map
        end = self.rank_end
        rank, previous, found = 0, values, False
        for entry in keys:
            if rank > end:
                break
            if not found and entry == key:
                rows = list(self._data.get(entry) or ())
                index = 0
                while index < len(rows) and rank <= end:
                    current = rows[index]
                    if not found and current == values:
                        previous, found = current, True
                        del rows[index]
                    else:
                        if found:
                            self.update(out, previous, current, rank)
                            previous = current
                        index += 1
                    rank += 1
                self._put_rows(entry, rows)
            elif found:
                rows = self._data.get(entry) or []
                index = 0
                while index < len(rows) and rank <= end:
                    current = rows[index]
                    self.update(out, previous, current, rank)
                    previous, rank, index = current, rank + 1, index + 1
            else:
                rank += counts[entry]
        if found and rank <= end:
            self.delete(out, previous, rank)
        return found

    def _retract_without_row_number(self, sorted_map: list[Any], key: Any,
                                    values: tuple[Any, ...], out: list[Any]) -> bool:
        keys, counts = sorted_map
        end = self.rank_end
        next_rank, found = 1, False
        for entry in keys:
            if next_rank > end:
                break
            if not found and entry == key:
                rows = list(self._data.get(entry) or ())
                index = 0
                while index < len(rows) and next_rank <= end:
                    current = rows[index]
                    if not found and current == values:
                        self.delete(out, current, next_rank)
                        next_rank -= 1
                        found = True
                        del rows[index]
                    else:
                        if found and next_rank == end:
                            self.insert(out, current, next_rank)
                        index += 1
                    next_rank += 1
                self._put_rows(entry, rows)
            elif found:
                last = next_rank + counts[entry] - 1
                if last < end:
                    next_rank = last + 1
                else:
                    rows = self._data.get(entry) or []
                    self.insert(out, rows[end - next_rank], 1)
                    break
            else:
                next_rank += counts[entry]
        return found
