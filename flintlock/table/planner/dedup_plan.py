"""Deduplication with mini-batch (issue 32): ``ROW_NUMBER() OVER (PARTITION BY k ORDER BY
proctime [DESC]) = 1`` over an insert-only input, with ``table.exec.mini-batch.enabled``, runs
as Flink's mini-batch deduplication (``changelog.mini_batch_dedup``: one row per key and
mini-batch, the keys in Flink's buffer order) instead of the per-row Top-1. Without mini-batch
the planner's Top-1 already gives Flink's per-row deduplication changelog."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from flintlock.common.changelog_rows import CHANGELOG_ROWS
from flintlock.datastream.changelog import mini_batch_dedup
from flintlock.datastream.changelog.rows import key_selector
from flintlock.datastream.data_stream import DataStream
from flintlock.table.plan import nodes as n
from flintlock.table.plan.changelog import ChangelogKind, mode
from flintlock.table.time_attributes import is_proctime


def mini_batch_deduplication(translator: Any, node: n.Rank,
                             key_type_tags: Callable[[list[Any]], list[str | None]]
                             ) -> DataStream | None:
    """The mini-batch deduplication stream of ``node``, or None where it does not apply;
    ``key_type_tags``: the planner's key types as ``binary_rows`` tags."""
    settings = translator.mini_batch
    if (settings is None or node.limit != 1 or node.output_number or not node.partition
            or len(node.order) != 1 or mode(node.input) is not ChangelogKind.INSERT_ONLY):
        return None
    order = node.order[0]
    if not is_proctime(node.input.fields[order.index].type):
        return None
    tags = key_type_tags([node.input.fields[i].type for i in node.partition])
    function: Any = (
        mini_batch_dedup.MiniBatchKeepFirstRowFunction(tags, translator.state_retention_ms)
        if order.ascending else mini_batch_dedup.MiniBatchKeepLastRowFunction(tags))
    settings.size_bundles(function)
    keyed = translator.stream(node.input).key_by(key_selector(node.partition))
    stream: DataStream = keyed._process_bundles(function, CHANGELOG_ROWS)
    return stream
