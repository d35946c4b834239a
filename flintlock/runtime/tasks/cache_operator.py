"""The operator of a cached stream (``OperatorKind.CACHE``): passes every batch on unchanged
and writes it to its subtask's part of the ``CachedResult`` (``common.cached_result``); at the
end of its input it commits the part, on ``close`` without an end (failure, cancellation) it
drops it. Only in jobs that compute the cache: once complete, the environment replaces the
operator with a source of the stored records. Task thread only."""

from __future__ import annotations

from typing import Any

from flintlock.common.cached_result import CachedResult, PartWriter
from flintlock.common.operator_spec import OperatorSpec
from flintlock.runtime.tasks.operator import StreamOperator


class CacheOperator(StreamOperator):
    def __init__(self, spec: OperatorSpec) -> None:
        if not isinstance(spec.cache, CachedResult):
            raise TypeError(f"a cache operator needs a CachedResult, got {spec.cache!r}")
        self._result = spec.cache
        self._part: PartWriter | None = None

    def open(self) -> None:
        ctx = self.context
        self._part = self._result.part_writer(ctx.subtask_index, ctx.parallelism)

    def process_batch(self, records: list[Any]) -> None:
        assert self._part is not None
        self._part.write(records)
        self.output.collect_batch(records)

    def end_input(self, input_index: int = 0) -> None:
        if self._part is not None:
            self._part.commit()

    def close(self) -> None:
        if self._part is not None:
            self._part.abort()
            self._part = None
