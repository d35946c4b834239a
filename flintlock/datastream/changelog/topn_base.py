"""What the Top-N (ROW_NUMBER rank) functions share: the rank range, the output rows and the
rank-checked emitters of Flink's ``AbstractTopNFunction``.

A rank is emitted only inside ``[rank_start, rank_end]``; an UPDATE_BEFORE only with
``generate_update_before``. An output row is the input row's fields, followed by the rank
number when ``output_rank_number`` (the query selects the ROW_NUMBER column).

Constructor arguments common to ``AppendOnlyTopNFunction`` and ``RetractableTopNFunction``::

    (partition_keys, sort_key, rank_end, rank_start=1, output_rank_number=True,
     generate_update_before=True)

* ``partition_keys`` — field positions of PARTITION BY; key the input with
  ``key_selector()`` (``()``: one global partition, key ``()``).
* ``sort_key`` — ``row -> key`` for ORDER BY (``sort_keys.sort_key_selector``).
* ``rank_end``, ``rank_start`` — ``WHERE rn <= rank_end`` (and ``rn >= rank_start``, Flink's
  offset); constants, 1 <= rank_start <= rank_end.
* ``output_rank_number`` — append the row number to each output row.
* ``generate_update_before`` — emit -U before +U (a retracting consumer).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from flintlock.datastream.changelog.errors import InvalidOperatorArgumentError
from flintlock.datastream.changelog.rows import (
    DELETE,
    INSERT,
    UPDATE_AFTER,
    UPDATE_BEFORE,
    key_selector,
    new_row,
)
from flintlock.datastream.functions import KeyedProcessFunction


class TopNFunction(KeyedProcessFunction):
    """Base of the Top-N functions; see the module docstring."""

    def __init__(self, partition_keys: Sequence[int], sort_key: Callable[[Any], Any],
                 rank_end: int, rank_start: int = 1, output_rank_number: bool = True,
                 generate_update_before: bool = True) -> None:
        name = type(self).__name__
        if not callable(sort_key):
            raise InvalidOperatorArgumentError(name, f"sort_key must be callable, got "
                                               f"{sort_key!r}")
        if not 1 <= rank_start <= rank_end:
            raise InvalidOperatorArgumentError(
                name, f"the rank range must satisfy 1 <= start <= end, got [{rank_start}, "
                f"{rank_end}]")
        self.partition_keys = tuple(partition_keys)
        self.sort_key = sort_key
        self.rank_start = rank_start
        self.rank_end = rank_end
        self.output_rank_number = output_rank_number
        self.generate_update_before = generate_update_before

    def key_selector(self) -> Callable[[Any], Any]:
        return key_selector(self.partition_keys)

    @property
    def numbered(self) -> bool:
        """Whether the row-number algorithm runs (Flink also uses it for an offset)."""
        return self.output_rank_number or self.rank_start > 1

    def _row(self, values: Sequence[Any], rank: int, kind: Any) -> Any:
        if self.output_rank_number:
            return new_row([*values, rank], kind)
        return new_row(list(values), kind)

    def _in_range(self, rank: int) -> bool:
        return self.rank_start <= rank <= self.rank_end

    def insert(self, out: list[Any], values: Sequence[Any], rank: int) -> None:
        if self._in_range(rank):
            out.append(self._row(values, rank, INSERT))

    def delete(self, out: list[Any], values: Sequence[Any], rank: int) -> None:
        if self._in_range(rank):
            out.append(self._row(values, rank, DELETE))

    def update(self, out: list[Any], before: Sequence[Any], after: Sequence[Any],
               rank: int) -> None:
        """-U[before, rank] (if generated) then +U[after, rank], when the rank is in range."""
        if self._in_range(rank):
            if self.generate_update_before:
                out.append(self._row(before, rank, UPDATE_BEFORE))
            out.append(self._row(after, rank, UPDATE_AFTER))
