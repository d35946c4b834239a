"""The ``RedisStreamSink`` writers: ``XADD`` of every record to one stream, at least once or
exactly once.

**At least once** (``AtLeastOnceWriter``, the default): each batch of records is appended as it
arrives, in one pipelined round trip, with server-generated ids. Nothing is held back, so a
checkpoint needs no state; after a restore, the records since the checkpoint are appended
again (duplicates, never loss).

**Exactly once** (``ExactlyOnceWriter``), a two-phase commit with a dedup key: records are
buffered; at ``snapshot_state(n)`` the buffer becomes a *staged batch* with a fresh random
token and goes into the writer's state; at ``commit(n)`` each staged batch up to ``n`` is
appended in one ``MULTI``/``EXEC`` transaction together with a marker key
``<marker_prefix><token>`` (with a time to live), under ``WATCH`` of that marker. A batch whose
marker exists was appended before, so committing it again — after a restore, which commits the
restored staged batches — appends nothing. Records reach the stream only when their checkpoint
completes (latency = checkpoint interval); without checkpointing they are appended at
``end_input`` (``EndOfInputRule``). The guarantee holds as long as a restore happens within
the marker's TTL.

Server-generated ids were chosen over deterministic explicit ids because several subtasks
append to one stream and Redis requires ids to grow with every append: ids derived from
(checkpoint, subtask, position) would be rejected whenever two subtasks interleave.

Everything here belongs to the sink subtask's task thread.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

import redis

from flintlock.datastream.connectors._delivery import EndOfInputRule

DEFAULT_VALUE_FIELD = "value"
DEFAULT_MARKER_PREFIX = "flintlock:redis-sink:committed:"
DEFAULT_MARKER_TTL_S = 7 * 24 * 3600


@dataclass(frozen=True, slots=True)
class RedisSinkSettings:
    url: str
    stream: str
    value_field: str = DEFAULT_VALUE_FIELD
    max_len: int | None = None  # approximate trimming (MAXLEN ~)
    exactly_once: bool = False
    marker_prefix: str = DEFAULT_MARKER_PREFIX
    marker_ttl_s: int = DEFAULT_MARKER_TTL_S


@dataclass(frozen=True, slots=True)
class StagedBatch:
    """Records of one checkpoint, appended together under one marker token."""

    checkpoint_id: int | None
    token: str
    records: tuple[Any, ...]


def to_fields(record: Any, value_field: str) -> dict[Any, Any]:
    """A dict is appended as the entry's fields; anything else as ``{value_field: str}``."""
    if isinstance(record, dict):
        return record
    if isinstance(record, (bytes, str)):
        return {value_field: record}
    return {value_field: str(record)}


class _RedisWriter:
    def __init__(self, settings: RedisSinkSettings) -> None:
        self._settings = settings
        self._client: Any = None

    def _redis(self) -> Any:
        if self._client is None:
            self._client = redis.Redis.from_url(self._settings.url)
        return self._client

    def _add_all(self, pipe: Any, records: Any) -> None:
        s = self._settings
        for record in records:
            pipe.xadd(s.stream, to_fields(record, s.value_field), maxlen=s.max_len,
                      approximate=True)

    def close(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None


class AtLeastOnceWriter(_RedisWriter):
    def restore(self, state: list[Any]) -> None:
        """Nothing to restore: everything was appended before the checkpoint."""

    def write(self, records: list[Any]) -> None:
        pipe = self._redis().pipeline(transaction=False)
        self._add_all(pipe, records)
        pipe.execute()

    def snapshot_state(self, checkpoint_id: int) -> list[Any]:
        return []

    def commit(self, checkpoint_id: int) -> None:
        """Nothing is held back."""

    def end_input(self) -> None:
        """Nothing is held back."""


class ExactlyOnceWriter(_RedisWriter):
    def __init__(self, settings: RedisSinkSettings) -> None:
        super().__init__(settings)
        self._buffer: list[Any] = []  # since the last checkpoint
        self._staged: list[StagedBatch] = []  # waiting for their checkpoints
        self._end_rule = EndOfInputRule()

    def set_checkpointing(self, enabled: bool) -> None:
        """Told by the runtime: whether checkpoints (and a final one) will come."""
        self._end_rule.set_checkpointing(enabled)

    def restore(self, state: list[Any]) -> None:
        if state:
            self._end_rule.saw_checkpoint()
        for batch in state:
            self._append_once(batch)

    def write(self, records: list[Any]) -> None:
        self._buffer.extend(records)

    def snapshot_state(self, checkpoint_id: int) -> list[Any]:
        self._end_rule.saw_checkpoint()
        if self._buffer:
            self._staged.append(StagedBatch(checkpoint_id, uuid.uuid4().hex,
                                            tuple(self._buffer)))
            self._buffer = []
        return list(self._staged)

    def commit(self, checkpoint_id: int) -> None:
        ready = [b for b in self._staged if b.checkpoint_id is not None
                 and b.checkpoint_id <= checkpoint_id]
        for batch in ready:
            self._append_once(batch)
        self._staged = [b for b in self._staged if b not in ready]

    def end_input(self) -> None:
        """Without checkpointing, appends everything; with checkpointing, the final
        checkpoint does."""
        if self._buffer and self._end_rule.publish_at_end():
            self._append_once(StagedBatch(None, uuid.uuid4().hex, tuple(self._buffer)))
            self._buffer = []

    def _append_once(self, batch: StagedBatch) -> None:
        marker = self._settings.marker_prefix + batch.token

        def transaction(pipe: Any) -> None:
            if pipe.exists(marker):
                return
            pipe.multi()
            self._add_all(pipe, batch.records)
            pipe.set(marker, batch.checkpoint_id or 0, ex=self._settings.marker_ttl_s)

        self._redis().transaction(transaction, marker)
