"""The first row per partition of an insert-only input without its row number: Flink's
``FastTop1Function`` (a ``ROW_NUMBER() ... WHERE rn = 1`` that does not select ``rn``).

Per partition the state holds the current first row and its sort key. A new row that sorts
strictly before it replaces it: ``-U[old]``, ``+U[new]`` (the partition keys are the result's
unique key, so the change is an update of that key, not a delete and an insert); the first row
of a partition is ``+I``; a row that does not sort before the current one (a tie keeps the
earlier row) changes nothing.

Constructor: ``Top1Function(partition_keys, sort_key, generate_update_before=True)`` (as
``topn_base``, rank end 1, no row number; without ``generate_update_before`` a replacement is
``+U[new]`` alone, for a consumer that needs no -U); key the input with ``key_selector()``.
The task thread owns it once opened.
"""

from __future__ import annotations

from typing import Any

from flintlock.common.state import ValueStateDescriptor
from flintlock.datastream.changelog.errors import NotInsertOnlyError
from flintlock.datastream.changelog.rows import INSERT, UPDATE_AFTER, UPDATE_BEFORE, new_row
from flintlock.datastream.changelog.topn_base import TopNFunction
from flintlock.datastream.functions import RuntimeContext


class Top1Function(TopNFunction):
    def __init__(self, partition_keys: Any, sort_key: Any,
                 generate_update_before: bool = True) -> None:
        super().__init__(partition_keys, sort_key, 1, 1, False, generate_update_before)

    def open(self, runtime_context: RuntimeContext) -> None:
        self._state = runtime_context.get_state(ValueStateDescriptor("top1-state"))

    def process_element(self, value: Any, ctx: Any) -> list[Any]:
        if value._row_kind is not INSERT:
            raise NotInsertOnlyError(type(self).__name__, value._row_kind.name)
        key = self.sort_key(value)
        current = self._state.value()
        values = list(value._values)
        if current is None:
            self._state.update((key, values))
            return [new_row(values, INSERT)]
        if not key < current[0]:
            return []
        self._state.update((key, values))
        if not self.generate_update_before:
            return [new_row(values, UPDATE_AFTER)]
        return [new_row(list(current[1]), UPDATE_BEFORE), new_row(values, UPDATE_AFTER)]
