"""Two-phase (local-global) window aggregation: Flink's ``LocalWindowAggregate`` before the
shuffle, ``GlobalWindowAggregate`` after it (issue 32), for an event-time TUMBLE window
aggregation of mergeable built-ins — the plan PyFlink 2.3.0 runs for such a query
(``table.optimizer.agg-phase-strategy`` AUTO or TWO_PHASE; no mini-batch needed, as in Flink).

* ``split_calls(calls, width)``: the global calls over the partial rows, or None where two
  phases do not apply (a FILTER, DISTINCT, computed arguments, or a function other than
  COUNT(*), COUNT, SUM, SUM0, MIN, MAX: those stay one phase). A partial COUNT is summed
  (``Sum0``); SUM, SUM0, MIN and MAX merge with themselves (a wrapped integer SUM wraps the
  same way summed twice: Java's arithmetic is modular).
* ``LocalWindowAggFunction``: runs on the BUNDLE_PROCESS operator
  (``runtime.tasks.bundle_process_operator``), chained to its input. Its bundle holds one
  entry per (window end, key) in the order of each one's first row, built by the same
  compiled calls as the one-phase aggregation (``window_codegen``); a bundle's end emits
  ``+I[keys..., partial results..., window_time]`` per entry in that order (no timestamp).
  The bundle ends before a watermark that reaches a buffered window's end - 1 (Flink's local
  operator flushes when a window would fire; ``ends_bundle_at``), before a checkpoint's
  snapshot, at the end of input, or when full.
* The global aggregation is ``WindowAggFunction`` itself, keyed by the partial's key fields,
  over the global calls, with the partial's ``window_time`` as its rowtime: its TUMBLE of
  ``end - 1`` is the partial's window.

Why the results are the one-phase results: a bundle ends before any watermark that would fire
one of its windows is forwarded, so every row that was on time at the local operator reaches
the global one before the watermark that makes its window fire; a row that was late there
(its window fired) is late at the global operator too, whose watermark is at least the one the
row saw, and its partial never mixes with on-time rows (they would have ended the bundle
first). Windows of one end fire in the order their keys' first partials arrived, which is the
order of their keys' first rows: the one-phase firing order.

Local state: none (nothing buffered at a checkpoint). The task thread owns an opened function.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from flintlock.datastream.changelog.aggregates import Count, Count1, Max, Min, Sum, Sum0
from flintlock.datastream.changelog.errors import InvalidOperatorArgumentError
from flintlock.datastream.changelog.group_agg import AggregateCall
from flintlock.datastream.changelog.window_assigners import from_millis
from flintlock.datastream.changelog.window_codegen import compile_local_fold
from flintlock.datastream.functions import ProcessFunction, RuntimeContext

__all__ = ["LocalWindowAggFunction", "split_calls"]

_SELF_MERGING = (Sum, Sum0, Min, Max)


def split_calls(calls: Sequence[AggregateCall], width: int) -> list[AggregateCall] | None:
    """The global calls over partial rows whose first ``width`` fields are the keys (the
    partial result of call i at ``width + i``), or None where two phases do not apply."""
    merged: list[AggregateCall] = []
    for index, call in enumerate(calls):
        if call.filter is not None or call.distinct or callable(call.arguments):
            return None
        kind = type(call.function)
        if kind in (Count1, Count):
            function: Any = Sum0(0)
        elif kind in _SELF_MERGING:
            function = call.function
        else:
            return None
        merged.append(AggregateCall(function, (width + index,)))
    return merged


class LocalWindowAggFunction(ProcessFunction):
    """The local phase (see the module docstring): ``grouping`` key positions, ``calls``,
    ``window`` (``("TUMBLE", size, 0, offset)`` in milliseconds) and ``rowtime_field``
    (a TIMESTAMP field, read as ``RowtimeOf`` reads it; ``rowtime``: the reader, for values
    that are not naive datetimes and their errors)."""

    def __init__(self, grouping: Sequence[int], calls: Sequence[AggregateCall],
                 window: tuple[str, int, int, int], rowtime_field: int,
                 rowtime: Callable[[Any], int]) -> None:
        if window[0] != "TUMBLE":
            raise InvalidOperatorArgumentError(
                "LocalWindowAggFunction", f"only TUMBLE windows, got {window[0]!r}")
        self.grouping = tuple(grouping)
        self.calls = list(calls)
        self.window = window
        self.rowtime_field = rowtime_field
        self.rowtime = rowtime
        self._lowest = _NO_END

    def open(self, runtime_context: RuntimeContext) -> None:
        for call in self.calls:
            opener = getattr(call.function, "open", None)
            if callable(opener):
                opener(runtime_context)
        self._fold, self._finish = compile_local_fold(
            self.calls, self.grouping, self.window, self.rowtime_field, self.rowtime,
            type(self).__name__)

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state.pop("_fold", None)  # compiled when opened
        state.pop("_finish", None)
        return state

    def process_element(self, value: Any, ctx: Any) -> tuple[Any, ...]:
        raise NotImplementedError("runs on the BUNDLE_PROCESS operator (add_batch)")

    # -- the BUNDLE_PROCESS protocol ----------------------------------------------------------

    def key_selector(self) -> Callable[[Any], Any]:
        """The bundle key of a row, ``(window end, keys...)`` (the per-record path)."""
        return self._key_of

    def _key_of(self, row: Any) -> Any:
        probe: dict[Any, Any] = {}
        self._fold(probe, [row])
        return next(iter(probe))

    def add_input(self, value: Any, record: Any) -> Any:
        """Folds one record into its entry (the per-record path; ``add_batch`` is the fast
        one and builds the same entries)."""
        probe = {} if value is None else {self._key_of(record): value}
        self.add_batch(probe, [record])
        (entry,) = probe.values()
        return entry

    def add_batch(self, bundle: dict[Any, Any], records: list[Any]) -> None:
        """Folds ``records`` into ``bundle`` in order (one compiled loop)."""
        lowest = self._fold(bundle, records)
        if lowest < self._lowest:
            self._lowest = lowest

    def ends_bundle_at(self, watermark: int) -> bool:
        """Whether the bundle must end before ``watermark`` goes on: it reaches a buffered
        window's end - 1 (that window would fire)."""
        return watermark >= self._lowest - 1

    def finish_bundle(self, bundle: dict[Any, Any]) -> list[Any]:
        self._lowest = _NO_END
        rows: list[Any] = self._finish(bundle, from_millis)
        return rows


_NO_END = 1 << 63
