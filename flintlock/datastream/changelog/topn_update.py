"""Top-N over an upsert input whose sort key only moves up: Flink's ``UpdatableTopNFunction``
(the planner's UpdateFastStrategy, e.g. the top N of a GROUP BY COUNT ordered by the count
descending).

The input has a unique key (``row_key``, field positions) and carries only +I/+U (no -U, no
-D): a row whose key is already in the top N replaces it. State per partition (one
``ValueState``): [sorted sort keys, {sort key: row keys in arrival order}, {row key: (row
values, sort key)}, number of rows] — the buffer of rows that can still be in the top N.

With the row number (``output_rank_number`` or an offset):

* a known row key whose sort key did not change: ``-U[old row, r]``, ``+U[new row, r]`` at
  its rank r;
* a known row key that moved up from rank ``old`` to rank ``new``: every rank from ``new``
  to ``old`` changes hands — per rank ``-U`` of its previous occupant and ``+U`` of the new
  one (the moved row's old version is retracted right after the first ``-U``);
* a new row key within the buffer's range: as the append-only Top-N (rows below shift one rank
  down, ``+I`` for the rank that fills); keys wholly beyond the range leave the buffer;
* a sort key that moved down raises ``UpsertInputError`` (Flink's default, not lenient).

Without it: a known row key -> ``-U[old]`` ``+U[new]``; a new row key within range ->
``-D`` of the row pushed out (if any) then ``+I``.

Constructor: ``topn_base``'s arguments plus ``row_key`` (keyword, required): the input's
unique key fields. The task thread owns the function once opened.
"""

from __future__ import annotations

from bisect import bisect_left, insort
from collections.abc import Callable, Sequence
from typing import Any

from flintlock.common.state import ValueStateDescriptor
from flintlock.datastream.changelog.errors import InvalidOperatorArgumentError, UpsertInputError
from flintlock.datastream.changelog.rows import INSERT, UPDATE_AFTER, UPDATE_BEFORE, key_selector
from flintlock.datastream.changelog.topn_base import TopNFunction
from flintlock.datastream.functions import RuntimeContext


class UpdatableTopNFunction(TopNFunction):
    """ROW_NUMBER Top-N over an upsert input with monotonic sort keys; see the module."""

    def __init__(self, partition_keys: Sequence[int], sort_key: Callable[[Any], Any],
                 rank_end: int, rank_start: int = 1, output_rank_number: bool = True,
                 generate_update_before: bool = True, *, row_key: Sequence[int]) -> None:
        super().__init__(partition_keys, sort_key, rank_end, rank_start, output_rank_number,
                         generate_update_before)
        if not row_key:
            raise InvalidOperatorArgumentError(type(self).__name__,
                                               "row_key must name the input's unique key")
        self.row_key = tuple(row_key)

    def open(self, runtime_context: RuntimeContext) -> None:
        self._state = runtime_context.get_state(ValueStateDescriptor("data-state-with-update"))
        self._row_key = key_selector(self.row_key)

    def process_element(self, value: Any, ctx: Any) -> list[Any]:
        kind = value._row_kind
        if kind is not INSERT and kind is not UPDATE_AFTER:
            raise UpsertInputError(type(self).__name__,
                                   f"received {kind.name}; its input must carry only INSERT "
                                   "and UPDATE_AFTER records")
        buffer = self._state.value() or [[], {}, {}, 0]
        values = tuple(value._values)
        key, row_key = self.sort_key(value), self._row_key(values)
        out: list[Any] = []
        if self.numbered:
            self._with_row_number(buffer, key, row_key, values, out)
        else:
            self._without_row_number(buffer, key, row_key, values, out)
        self._state.update(buffer)
        return out

    # -- the buffer (Flink's TopNBuffer) ----------------------------------------------------

    @staticmethod
    def _put(buffer: list[Any], key: Any, row_key: Any) -> None:
        keys, by_key = buffer[0], buffer[1]
        row_keys = by_key.get(key)
        if row_keys is None:
            insort(keys, key)
            by_key[key] = [row_key]
            buffer[3] += 1
        elif row_key not in row_keys:
            row_keys.append(row_key)
            buffer[3] += 1

    @staticmethod
    def _remove(buffer: list[Any], key: Any, row_key: Any) -> None:
        keys, by_key = buffer[0], buffer[1]
        row_keys = by_key.get(key)
        if row_keys is not None and row_key in row_keys:
            row_keys.remove(row_key)
            buffer[3] -= 1
            if not row_keys:
                del by_key[key]
                del keys[bisect_left(keys, key)]

    def _in_buffer_range(self, buffer: list[Any], key: Any) -> bool:
        keys = buffer[0]
        return not keys or key < keys[-1] or buffer[3] < self.rank_end

    @staticmethod
    def _rank_of(buffer: list[Any], key: Any, row_key: Any) -> int:
        rank = 1
        for entry in buffer[0]:
            row_keys = buffer[1][entry]
            if entry == key:
                return rank + int(row_keys.index(row_key))
            rank += len(row_keys)
        raise UpsertInputError("UpdatableTopNFunction", "a row key is missing from its buffer")

    # -- with the row number ------------------------------------------------------------------

    def _with_row_number(self, buffer: list[Any], key: Any, row_key: Any,
                         values: tuple[Any, ...], out: list[Any]) -> None:
        rows = buffer[2]
        known = rows.get(row_key)
        if known is None:
            if self._in_buffer_range(buffer, key):
                self._put(buffer, key, row_key)
                rows[row_key] = (values, key)
                self._emit(buffer, key, values, None, None, -1, out)
            return
        old_values, old_key = known
        if key == old_key:
            rank = self._rank_of(buffer, key, row_key)
            rows[row_key] = (values, key)
            self.update(out, old_values, values, rank)
            return
        if not key < old_key:
            raise UpsertInputError(type(self).__name__, (
                f"the update {list(values)} moved its sort key down, which breaks the "
                "monotonicity of the sort key the plan relies on"))
        old_rank = self._rank_of(buffer, old_key, row_key)
        self._remove(buffer, old_key, row_key)
        self._put(buffer, key, row_key)
        rows[row_key] = (values, key)
        self._emit(buffer, key, values, old_key, old_values, old_rank, out)

    def _emit(self, buffer: list[Any], key: Any, values: tuple[Any, ...], old_key: Any,
              old_values: Any, old_rank: int, out: list[Any]) -> None:
        keys, by_key, rows = buffer[0], buffer[1], buffer[2]
        end = self.rank_end
        rank, current, found, position, retracted = 0, values, False, 0, False
        while position < len(keys) and rank <= end:
            entry = keys[position]
            position += 1
            row_keys = by_key[entry]
            if not found and entry == key:
                rank += len(row_keys)
                found = True
            elif found:
                if old_key is not None and old_key < entry:
                    break
                limit = end if old_key is None else old_rank - 1
                index = 0
                while index < len(row_keys) and rank <= limit:
                    previous = rows[row_keys[index]][0]
                    self._before(out, previous, rank)
                    if current is values and old_values is not None and not retracted:
                        self._before(out, old_values, old_rank)
                        retracted = True
                    self._after(out, current, rank)
                    current, rank, index = previous, rank + 1, index + 1
            else:
                rank += len(row_keys)
        if rank <= end:
            if old_values is None:
                self.insert(out, current, rank)
            else:
                if not retracted:
                    self._before(out, old_values, old_rank)
                self._after(out, current, rank)
            return
        for entry in keys[position:]:
            for row_key in by_key.pop(entry):
                del rows[row_key]
                buffer[3] -= 1
        del keys[position:]

    def _before(self, out: list[Any], values: Sequence[Any], rank: int) -> None:
        if self.generate_update_before and self._in_range(rank):
            out.append(self._row(values, rank, UPDATE_BEFORE))

    def _after(self, out: list[Any], values: Sequence[Any], rank: int) -> None:
        if self._in_range(rank):
            out.append(self._row(values, rank, UPDATE_AFTER))

    # -- without the row number ---------------------------------------------------------------

    def _without_row_number(self, buffer: list[Any], key: Any, row_key: Any,
                            values: tuple[Any, ...], out: list[Any]) -> None:
        rows = buffer[2]
        known = rows.get(row_key)
        if known is not None:
            old_values, old_key = known
            if key != old_key:
                self._remove(buffer, old_key, row_key)
                self._put(buffer, key, row_key)
            rows[row_key] = (values, key)
            self.update(out, old_values, values, 1)
            return
        if not self._in_buffer_range(buffer, key):
            return
        self._put(buffer, key, row_key)
        rows[row_key] = (values, key)
        if buffer[3] > self.rank_end:
            keys, by_key = buffer[0], buffer[1]
            last_key = keys[-1]
            last_row_key = by_key[last_key].pop()
            buffer[3] -= 1
            if not by_key[last_key]:
                del by_key[last_key]
                keys.pop()
            self.delete(out, rows.pop(last_row_key)[0], 1)
        self.insert(out, values, 1)
