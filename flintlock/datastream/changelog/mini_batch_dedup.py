"""Mini-batch deduplication on processing-time order (``table.exec.mini-batch.*`` with
``ROW_NUMBER() OVER (PARTITION BY k ORDER BY proctime [DESC]) = 1``, issue 32): Flink 2.3's
``ProcTimeMiniBatchDeduplicateKeepFirstRowFunction`` and
``ProcTimeMiniBatchDeduplicateKeepLastRowFunction`` on the KEYED_BUNDLE_PROCESS operator
(``KeyedStream._process_bundles``; the planner sets ``bundle_size`` / ``bundle_time_ms`` from
the mini-batch settings).

A mini-batch keeps one row per key — the first of the batch (keep first) or the last (keep
last) — and when it ends (its size, its latency, a watermark, a checkpoint, the end of input)
each key, in the order Flink's buffer (a Java ``HashMap`` of the keys as ``BinaryRowData``,
``binary_rows.hash_map_order``) walks them, is handled as the per-row function
(``deduplicate``) handles that one row: keep first emits ``+I`` for a key never seen before,
keep last ``+I`` for a new key, else ``-U`` previous (with ``generate_update_before``) and
``+U`` — nothing when the row equals the previous one. The state is the per-row functions'
(one ``ValueState`` per key), so a job may switch mini-batch on or off across a savepoint.

``MiniBatchKeepFirstRowFunction(key_tags, state_retention_ms=0)``,
``MiniBatchKeepLastRowFunction(key_tags, generate_update_before=True, generate_insert=True,
state_retention_ms=0)``: ``key_tags`` are the key fields' ``binary_rows`` type tags (None: the
keys keep their arrival order). Insert-only input (else ``NotInsertOnlyError``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from flintlock.datastream.changelog.binary_rows import hash_map_order
from flintlock.datastream.changelog.deduplicate import KeepFirstRowFunction, KeepLastRowFunction
from flintlock.datastream.changelog.errors import NotInsertOnlyError
from flintlock.datastream.changelog.rows import INSERT

__all__ = ["MiniBatchKeepFirstRowFunction", "MiniBatchKeepLastRowFunction"]


def _key_fields(width: int) -> Callable[[Any], tuple[Any, ...]]:
    if width == 1:
        return lambda key: (key,)
    return lambda key: key


def _insert_only(rows: list[Any], name: str) -> None:
    for row in rows:
        if row._row_kind is not INSERT:
            raise NotInsertOnlyError(name, row._row_kind.name)


class _BufferOrder:
    key_tags: tuple[str | None, ...] | None

    def bundle_order(self, keys: list[Any]) -> list[Any]:
        width = len(self.key_tags) if self.key_tags is not None else 1
        return hash_map_order(keys, self.key_tags, _key_fields(width))


class MiniBatchKeepFirstRowFunction(_BufferOrder, KeepFirstRowFunction):
    """Keep the first row per key, a mini-batch at a time; see the module docstring."""

    def __init__(self, key_tags: Sequence[str | None] | None,
                 state_retention_ms: int = 0) -> None:
        super().__init__(state_retention_ms)
        self.key_tags = None if key_tags is None else tuple(key_tags)

    def process_bundle(self, rows: list[Any], ctx: Any) -> tuple[Any, ...]:
        _insert_only(rows, type(self).__name__)
        return self.process_element(rows[0], ctx)


class MiniBatchKeepLastRowFunction(_BufferOrder, KeepLastRowFunction):
    """Keep the last row per key, a mini-batch at a time; see the module docstring."""

    def __init__(self, key_tags: Sequence[str | None] | None,
                 generate_update_before: bool = True, generate_insert: bool = True,
                 state_retention_ms: int = 0) -> None:
        super().__init__(generate_update_before, generate_insert, state_retention_ms)
        self.key_tags = None if key_tags is None else tuple(key_tags)

    def process_bundle(self, rows: list[Any], ctx: Any) -> tuple[Any, ...]:
        _insert_only(rows, type(self).__name__)
        return self.process_element(rows[-1], ctx)
