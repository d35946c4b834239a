"""Window join (two window table functions joined on their keys and on ``window_start`` and
``window_end``): Flink 2.3's ``WindowJoinOperator`` results, as a ``KeyedCoProcessFunction``
keyed by the equi-join keys (the window bounds among them) over two insert-only inputs.

``WindowJoinFunction(join_type, left_arity, right_arity, left_keys, right_keys, left_end,
right_end, condition=None, shift=0)``:

* ``join_type``: ``join.JoinType`` INNER, LEFT, RIGHT or FULL; arities pad the outer side;
  keys pair up as in ``StreamingJoinFunction``; ``left_end``/``right_end``: the position of
  each side's ``window_end`` (a TIMESTAMP(3) value); ``condition(left_values,
  right_values)``: the rest of the ON clause; ``shift`` as in ``window_agg``.
* Each side's rows wait in ``ListState`` (``leftRecords``, ``rightRecords``) until the
  watermark — the smaller of the two inputs' — reaches the window's end - 1; then every left
  row is joined with the right rows, in arrival order, and emitted as ``+I``; an outer side's
  rows without a match come out padded with NULLs (left ones after each left row's matches,
  right ones at the end). A row whose window has fired is dropped. Append-only output.

Non-INSERT input raises ``NotInsertOnlyError``. The task thread owns a function once opened.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from flintlock.common.state import ListStateDescriptor
from flintlock.datastream.changelog.errors import NotInsertOnlyError
from flintlock.datastream.changelog.join import JoinType
from flintlock.datastream.changelog.rows import INSERT, key_selector, new_row
from flintlock.datastream.changelog.window_assigners import to_millis
from flintlock.datastream.functions import KeyedCoProcessFunction, RuntimeContext

__all__ = ["WindowJoinFunction"]


class WindowJoinFunction(KeyedCoProcessFunction):
    """Joins the rows of one window and key when the window ends (module docstring)."""

    def __init__(self, join_type: JoinType, left_arity: int, right_arity: int,
                 left_keys: Sequence[int], right_keys: Sequence[int], left_end: int,
                 right_end: int, condition: Callable[[Any, Any], Any] | None = None,
                 shift: int = 0) -> None:
        self.join_type = join_type
        self.left_arity = left_arity
        self.right_arity = right_arity
        self.left_keys = tuple(left_keys)
        self.right_keys = tuple(right_keys)
        self.left_end = left_end
        self.right_end = right_end
        self.condition = condition
        self.shift = shift

    def left_key_selector(self) -> Callable[[Any], Any]:
        return key_selector(self.left_keys)

    def right_key_selector(self) -> Callable[[Any], Any]:
        return key_selector(self.right_keys)

    def open(self, runtime_context: RuntimeContext) -> None:
        self._left = runtime_context.get_list_state(ListStateDescriptor("leftRecords"))
        self._right = runtime_context.get_list_state(ListStateDescriptor("rightRecords"))

    def _add(self, value: Any, ctx: Any, state: Any, end_index: int) -> tuple[Any, ...]:
        if value._row_kind is not INSERT:
            raise NotInsertOnlyError(type(self).__name__, value._row_kind.name)
        fires_at = to_millis(value._values[end_index]) - 1 - self.shift
        timers = ctx.timer_service()
        if fires_at <= timers.current_watermark():
            return ()  # its window has fired
        timers.register_event_time_timer(fires_at)
        state.add(list(value._values))
        return ()

    def process_element1(self, value: Any, ctx: Any) -> tuple[Any, ...]:
        return self._add(value, ctx, self._left, self.left_end)

    def process_element2(self, value: Any, ctx: Any) -> tuple[Any, ...]:
        return self._add(value, ctx, self._right, self.right_end)

    def on_timer(self, timestamp: int, ctx: Any) -> list[Any]:
        lefts = list(self._left.get())
        rights = list(self._right.get())
        self._left.clear()
        self._right.clear()
        kind = self.join_type
        out = []
        matched_right = [False] * len(rights)
        for left in lefts:
            matched = False
            for index, right in enumerate(rights):
                if self.condition is None or self.condition(left, right):
                    matched = True
                    matched_right[index] = True
                    out.append(new_row(left + right, INSERT))
            if not matched and kind in (JoinType.LEFT, JoinType.FULL):
                out.append(new_row(left + [None] * self.right_arity, INSERT))
        if kind in (JoinType.RIGHT, JoinType.FULL):
            out.extend(new_row([None] * self.left_arity + right, INSERT)
                       for right, matched in zip(rights, matched_right, strict=True)
                       if not matched)
        return out
