"""``DataStream.cache()``: keep a stream's records for the later jobs of the same environment
(BATCH execution mode, as in PyFlink).

``cache()`` (``data_stream.CachedDataStream``) adds a cache operator (``OperatorKind.CACHE``)
after the stream: it passes the records on and stores them in a ``CachedResult`` directory
created on the driver. The first job that runs the cached stream computes it and fills the
result. Before every later job the environment calls ``use_cached_results``: a cached stream
whose result is complete becomes a collection source of the stored records (its
``Transformation`` is switched in place, so every stream built on it, before or after, reads
the stored records), and nothing upstream of it runs again. ``invalidate()`` drops the stored
records and switches the stream back, so the next job computes it anew; ``env.close()`` drops
every result (``release_cached_results``).

The stored records travel to later jobs inside their job description (a collection source),
so a cache is for what fits in the driver's memory; the directory must be readable by the
TaskManagers under the same path (threads, embedded Spark; a shared file system on a cluster).

Owned by the user's thread, like the rest of the environment's transformations.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterable
from dataclasses import dataclass

from flintlock.common.cached_result import CachedResult
from flintlock.common.operator_spec import CollectionSource, OperatorKind, OperatorSpec
from flintlock.datastream.errors import DataStreamApiError
from flintlock.datastream.transformations import StreamInput, Transformation
from flintlock.graph.stream_graph import ChainingStrategy

_BATCH = "batch"


class CacheRequiresBatchModeError(DataStreamApiError, ValueError):
    """``cache()`` on an environment that is not in BATCH execution mode."""

    def __init__(self, mode: str) -> None:
        super().__init__(mode)
        self.mode = mode

    def __str__(self) -> str:
        return (f"cache() needs BATCH execution mode, the environment is in {self.mode!r}; "
                "call env.set_runtime_mode(RuntimeExecutionMode.BATCH) first")


@dataclass(eq=False)
class CachedStream:
    """The cache of one stream: its result and how to compute it again."""

    result: CachedResult
    operator_spec: OperatorSpec
    inputs: list[tuple[StreamInput, int]]
    chaining: ChainingStrategy
    stored: bool = False  # the transformation reads the stored records

    def use_if_complete(self, transformation: Transformation) -> None:
        if self.stored or not self.result.is_complete():
            return
        records = tuple(self.result.read())
        transformation.spec = OperatorSpec(
            OperatorKind.SOURCE, output_type=self.operator_spec.output_type,
            source=CollectionSource(records))
        transformation.inputs = []
        transformation.chaining = ChainingStrategy.HEAD
        self.stored = True

    def invalidate(self, transformation: Transformation) -> None:
        self.result.release()
        transformation.spec = self.operator_spec
        transformation.inputs = list(self.inputs)
        transformation.chaining = self.chaining
        self.stored = False


def new_cached_result() -> CachedResult:
    """A fresh, empty result directory on the driver."""
    return CachedResult(tempfile.mkdtemp(prefix="flintlock-cache-"))


def check_batch_mode(mode: str) -> None:
    if mode.lower() != _BATCH:
        raise CacheRequiresBatchModeError(mode)


def use_cached_results(transformations: Iterable[Transformation]) -> None:
    """Before a job is built: cached streams with a complete result read it."""
    for transformation in transformations:
        if transformation.cached is not None:
            transformation.cached.use_if_complete(transformation)


def release_cached_results(transformations: Iterable[Transformation]) -> None:
    """``env.close()``: drop every stored result."""
    for transformation in transformations:
        if transformation.cached is not None:
            transformation.cached.result.release()
