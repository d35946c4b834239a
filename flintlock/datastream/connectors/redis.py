"""Redis Streams source and sink (flintlock's own connector; PyFlink has none).

Reading::

    source = (RedisStreamSource.builder()
              .set_url("redis://127.0.0.1:6379/0")
              .set_streams("orders", "refunds")
              .set_starting_id("0-0")          # or "$" (only new entries), or an entry id
              .set_value_field("value")        # emit that field's value; leave out for
              .build())                        # StreamEntry(stream, id, fields)
    ds = env.from_source(source, WatermarkStrategy.no_watermarks(), "redis")

Unbounded by default; ``set_bounded()`` stops at the last entry each stream had when the job
first started. Stream ids are checkpointed: a restore re-reads exactly the entries after them,
so with an exactly-once sink the job is exactly once end to end. Each stream key is one
split; streams are dealt round robin over the source subtasks.

Writing::

    sink = (RedisStreamSink.builder()
            .set_url("redis://127.0.0.1:6379/0")
            .set_stream("results")
            .set_value_field("value")                    # str records go to this field
            .set_delivery_guarantee(DeliveryGuarantee.EXACTLY_ONCE)   # default AT_LEAST_ONCE
            .build())
    ds.sink_to(sink)

Records that are dicts become the entry's fields; anything else is written as
``{value_field: str(record)}``. The two guarantees are described in ``_redis_sink``. Connections
use the ``redis`` package (``redis://``, ``rediss://`` and ``unix://`` URLs).
"""

from __future__ import annotations

from typing import Any

from flintlock.common.time import Duration
from flintlock.datastream.connectors._enumeration import DealingEnumerator, EnumeratorSnapshot
from flintlock.datastream.connectors._redis_sink import (
    DEFAULT_MARKER_PREFIX,
    DEFAULT_MARKER_TTL_S,
    DEFAULT_VALUE_FIELD,
    AtLeastOnceWriter,
    ExactlyOnceWriter,
    RedisSinkSettings,
)
from flintlock.datastream.connectors._redis_source import (
    START_FROM_BEGINNING,
    RedisStreamReader,
    StreamDiscovery,
    StreamEntry,
    check_start_id,
)
from flintlock.datastream.connectors.base import DeliveryGuarantee, Sink, Source

DEFAULT_URL = "redis://127.0.0.1:6379/0"


def _non_empty(value: Any, what: str) -> str:
    if not isinstance(value, str) or not value:
        raise ValueError(f"{what} must be a non-empty str, got {value!r}")
    return value


class RedisStreamSource(Source):
    """Reads entries of one or more Redis streams (see the module docstring)."""

    def __init__(self, streams: tuple[str, ...], url: str = DEFAULT_URL,
                 start_id: str = START_FROM_BEGINNING, bounded: bool = False,
                 value_field: str | None = None) -> None:
        if not streams:
            raise ValueError("RedisStreamSource needs at least one stream")
        self._streams = tuple(dict.fromkeys(_non_empty(s, "stream") for s in streams))
        self._url = _non_empty(url, "url")
        self._start_id = check_start_id(start_id)
        self._bounded = bool(bounded)
        self._value_field = value_field

    @staticmethod
    def builder() -> RedisStreamSourceBuilder:
        return RedisStreamSourceBuilder()

    def is_bounded(self) -> bool:
        return self._bounded

    @property
    def streams(self) -> tuple[str, ...]:
        return self._streams

    def create_enumerator(self, parallelism: int,
                          restored_state: EnumeratorSnapshot | None) -> DealingEnumerator:
        discovery = StreamDiscovery(self._url, self._streams, self._start_id, self._bounded)
        return DealingEnumerator(parallelism, restored_state, discovery, bounded=self._bounded)

    def create_reader(self, subtask_index: int, parallelism: int) -> RedisStreamReader:
        return RedisStreamReader(self._url, self._value_field)

    def __repr__(self) -> str:
        return f"RedisStreamSource({', '.join(self._streams)} at {self._url})"


class RedisStreamSourceBuilder:
    def __init__(self) -> None:
        self._url = DEFAULT_URL
        self._streams: tuple[str, ...] = ()
        self._start_id = START_FROM_BEGINNING
        self._bounded = False
        self._value_field: str | None = None

    def set_url(self, url: str) -> RedisStreamSourceBuilder:
        self._url = _non_empty(url, "url")
        return self

    def set_streams(self, *streams: str) -> RedisStreamSourceBuilder:
        self._streams = tuple(streams)
        return self

    def set_starting_id(self, start_id: str) -> RedisStreamSourceBuilder:
        """``"0-0"`` (the default): every entry; ``"$"``: entries added after the job first
        started; an entry id: entries after it."""
        self._start_id = check_start_id(start_id)
        return self

    def set_bounded(self) -> RedisStreamSourceBuilder:
        """Stop at the last entry each stream had when the job first started."""
        self._bounded = True
        return self

    def set_unbounded(self) -> RedisStreamSourceBuilder:
        self._bounded = False
        return self

    def set_value_field(self, field: str | None) -> RedisStreamSourceBuilder:
        """Emit only this field's value (None: emit ``StreamEntry`` tuples)."""
        self._value_field = None if field is None else _non_empty(field, "value field")
        return self

    def build(self) -> RedisStreamSource:
        return RedisStreamSource(self._streams, self._url, self._start_id, self._bounded,
                                 self._value_field)


class RedisStreamSink(Sink):
    """Appends records to a Redis stream (see the module docstring)."""

    def __init__(self, settings: RedisSinkSettings) -> None:
        self._settings = settings

    @staticmethod
    def builder() -> RedisStreamSinkBuilder:
        return RedisStreamSinkBuilder()

    @property
    def settings(self) -> RedisSinkSettings:
        return self._settings

    def create_writer(self, subtask_index: int,
                      parallelism: int) -> AtLeastOnceWriter | ExactlyOnceWriter:
        if self._settings.exactly_once:
            return ExactlyOnceWriter(self._settings)
        return AtLeastOnceWriter(self._settings)

    def __repr__(self) -> str:
        return f"RedisStreamSink({self._settings.stream} at {self._settings.url})"


class RedisStreamSinkBuilder:
    def __init__(self) -> None:
        self._url = DEFAULT_URL
        self._stream: str | None = None
        self._value_field = DEFAULT_VALUE_FIELD
        self._max_len: int | None = None
        self._guarantee = DeliveryGuarantee.AT_LEAST_ONCE
        self._marker_prefix = DEFAULT_MARKER_PREFIX
        self._marker_ttl_s = DEFAULT_MARKER_TTL_S

    def set_url(self, url: str) -> RedisStreamSinkBuilder:
        self._url = _non_empty(url, "url")
        return self

    def set_stream(self, stream: str) -> RedisStreamSinkBuilder:
        self._stream = _non_empty(stream, "stream")
        return self

    def set_value_field(self, field: str) -> RedisStreamSinkBuilder:
        self._value_field = _non_empty(field, "value field")
        return self

    def set_max_len(self, max_len: int) -> RedisStreamSinkBuilder:
        """Trim the stream to about ``max_len`` entries on every append (``MAXLEN ~``)."""
        if isinstance(max_len, bool) or not isinstance(max_len, int) or max_len < 1:
            raise ValueError(f"max_len must be a positive int, got {max_len!r}")
        self._max_len = max_len
        return self

    def set_delivery_guarantee(self, guarantee: DeliveryGuarantee) -> RedisStreamSinkBuilder:
        if guarantee not in (DeliveryGuarantee.AT_LEAST_ONCE, DeliveryGuarantee.EXACTLY_ONCE):
            raise ValueError(f"RedisStreamSink supports AT_LEAST_ONCE and EXACTLY_ONCE, got "
                             f"{guarantee!r}")
        self._guarantee = guarantee
        return self

    def set_marker_prefix(self, prefix: str) -> RedisStreamSinkBuilder:
        """Key prefix of the exactly-once commit markers."""
        self._marker_prefix = _non_empty(prefix, "marker prefix")
        return self

    def set_marker_ttl(self, ttl: Duration) -> RedisStreamSinkBuilder:
        """How long commit markers are kept (exactly once holds for restores within it)."""
        if not isinstance(ttl, Duration) or ttl.to_milliseconds() < 1000:
            raise ValueError(f"marker TTL must be a Duration of at least 1 s, got {ttl!r}")
        self._marker_ttl_s = ttl.to_milliseconds() // 1000
        return self

    def build(self) -> RedisStreamSink:
        if self._stream is None:
            raise ValueError("RedisStreamSink needs a stream: call set_stream(key)")
        return RedisStreamSink(RedisSinkSettings(
            self._url, self._stream, self._value_field, self._max_len,
            self._guarantee is DeliveryGuarantee.EXACTLY_ONCE, self._marker_prefix,
            self._marker_ttl_s))


__all__ = [
    "DeliveryGuarantee",
    "RedisStreamSink",
    "RedisStreamSinkBuilder",
    "RedisStreamSource",
    "RedisStreamSourceBuilder",
    "StreamEntry",
]
