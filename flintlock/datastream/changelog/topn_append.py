"""Top-N over an insert-only input: Flink's ``AppendOnlyTopNFunction``.

Per partition the state (one ``ValueState``) holds the buffer of the best rows seen:
[sorted sort keys, {sort key: rows in arrival order}, number of rows]. Rows that fall out of
the top ``rank_end`` are dropped from it, since an insert-only input never brings them back.

For a new row with sort key ``k``:

* if the buffer holds rows and ``k`` is not better than the worst key held, the row is
  ignored once the buffer holds ``rank_end`` rows;
* otherwise it is added after the rows with an equal key, and
  - with the row number (``output_rank_number``, or a rank offset): every row from the new
    row's position down to ``rank_end`` moves one rank down: ``-U[old row, r]``,
    ``+U[row now at r, r]`` for each such rank r, and ``+I[row, r]`` for the last one when the
    top was not yet full; keys wholly beyond the range are dropped from the buffer;
  - without it: if the buffer now holds more than ``rank_end`` rows its last row is dropped
    and, unless that is the new row itself, emitted as ``-D``; then ``+I[new row]``.

Only INSERT rows are accepted (``NotInsertOnlyError`` otherwise). Constructor arguments: see
``topn_base``. The task thread owns the function once opened.
"""

from __future__ import annotations

from bisect import insort
from typing import Any

from flintlock.common.state import ValueStateDescriptor
from flintlock.datastream.changelog.errors import NotInsertOnlyError
from flintlock.datastream.changelog.rows import INSERT
from flintlock.datastream.changelog.topn_base import TopNFunction
from flintlock.datastream.functions import RuntimeContext


class AppendOnlyTopNFunction(TopNFunction):
    """ROW_NUMBER Top-N over insert-only input; see the module docstring."""

    def open(self, runtime_context: RuntimeContext) -> None:
        self._state = runtime_context.get_state(ValueStateDescriptor("data-state-with-append"))

    def process_element(self, value: Any, ctx: Any) -> list[Any]:
        if value._row_kind is not INSERT:
            raise NotInsertOnlyError(type(self).__name__, value._row_kind.name)
        buffer = self._state.value()
        if buffer is None:
            buffer = [[], {}, 0]
        key = self.sort_key(value)
        keys, rows = buffer[0], buffer[1]
        if keys and not key < keys[-1] and buffer[2] >= self.rank_end:
            return []
        values = tuple(value._values)
        same = rows.get(key)
        if same is None:
            insort(keys, key)
            rows[key] = [values]
        else:
            same.append(values)
        buffer[2] += 1
        out: list[Any] = []
        if self.numbered:
            self._with_row_number(buffer, key, values, out)
        else:
            self._without_row_number(buffer, values, out)
        self._state.update(buffer)
        return out

    def _with_row_number(self, buffer: list[Any], key: Any, values: tuple[Any, ...],
                         out: list[Any]) -> None:
        keys, rows = buffer[0], buffer[1]
        end = self.rank_end
        rank, current, found, position = 0, values, False, 0
        while position < len(keys) and rank <= end:
            entry = keys[position]
            records = rows[entry]
            position += 1
            if not found and entry == key:
                rank += len(records)
                found = True
            elif found:
                index = 0
                while index < len(records) and rank <= end:
                    previous = records[index]
                    self.update(out, previous, current, rank)
                    current, rank, index = previous, rank + 1, index + 1
            else:
                rank += len(records)
        if rank <= end:
            self.insert(out, current, rank)
        for entry in keys[position:]:
            buffer[2] -= len(rows.pop(entry))
        del keys[position:]

    def _without_row_number(self, buffer: list[Any], values: tuple[Any, ...],
                            out: list[Any]) -> None:
        keys, rows = buffer[0], buffer[1]
        if buffer[2] > self.rank_end:
            last_key = keys[-1]
            last_rows = rows[last_key]
            last = last_rows.pop()
            if not last_rows:
                del rows[last_key]
                keys.pop()
            buffer[2] -= 1
            if last == values:
                return
            self.delete(out, last, 1)
        self.insert(out, values, 1)
