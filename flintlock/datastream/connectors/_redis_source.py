"""The machinery behind ``RedisStreamSource``: one split per stream key, resolved in the
JobManager, read with non-blocking ``XREAD`` in the source subtasks.

**Splits** (``RedisStreamSplit``): a stream key, the id of the last entry read (``0-0`` before
the first) and, for a bounded source, the id of the last entry to read. The enumerator
(``StreamDiscovery.initial``, JobManager thread, fresh start only) turns the configured start
(``0-0``, ``$`` or an explicit id) into a concrete id and, when bounded, records the id of the
stream's last entry at that moment, so every later restore reads up to the same entry.

**Reader** (``RedisStreamReader``): one ``XREAD`` per poll over all of its unfinished splits,
without ``BLOCK`` (an empty answer is "nothing now"; the task polls again shortly). After each
entry the split's last id advances; its snapshot is its unfinished splits, so a restore
re-reads exactly the entries after the checkpointed ids. A bounded split is finished once its
last id reaches the stop id; the reader is finished when all splits are and the enumerator
said no more splits. The connection is opened lazily and belongs to the task thread.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, NamedTuple

import redis

START_FROM_BEGINNING = "0-0"
START_FROM_END = "$"


class StreamEntry(NamedTuple):
    """What the source emits when no ``value_field`` is set."""

    stream: str
    id: str
    fields: dict[str, str]


def parse_id(entry_id: str) -> tuple[int, int]:
    """``"1700000000000-3"`` → ``(1700000000000, 3)``; ``"5"`` → ``(5, 0)``."""
    millis, _, seq = entry_id.partition("-")
    return int(millis), int(seq or 0)


def check_start_id(start_id: str) -> str:
    if start_id == START_FROM_END:
        return start_id
    try:
        millis, seq = parse_id(start_id)
    except (ValueError, AttributeError):
        raise ValueError(f"start id must be '0-0', '$' or an entry id like '1700000000000-0', "
                         f"got {start_id!r}") from None
    return f"{millis}-{seq}"


@dataclass(frozen=True, slots=True)
class RedisStreamSplit:
    stream: str
    last_id: str
    stop_id: str | None = None  # bounded: the last entry to read

    @property
    def split_id(self) -> str:
        return self.stream

    @property
    def finished(self) -> bool:
        return self.stop_id is not None and parse_id(self.last_id) >= parse_id(self.stop_id)


def last_entry_id(client: Any, stream: str) -> str:
    """The id of the stream's newest entry (``0-0`` when it is empty or missing)."""
    newest = client.xrevrange(stream, count=1)
    return newest[0][0] if newest else START_FROM_BEGINNING


class StreamDiscovery:
    """Resolves the configured start (and stop) ids once, at a fresh start."""

    def __init__(self, url: str, streams: tuple[str, ...], start_id: str, bounded: bool) -> None:
        self._url = url
        self._streams = streams
        self._start_id = start_id
        self._bounded = bounded

    def initial(self) -> list[Any]:
        client = redis.Redis.from_url(self._url, decode_responses=True)
        try:
            return [self._split(client, stream) for stream in self._streams]
        finally:
            client.close()

    def _split(self, client: Any, stream: str) -> RedisStreamSplit:
        newest = last_entry_id(client, stream)
        start = newest if self._start_id == START_FROM_END else self._start_id
        return RedisStreamSplit(stream, start, newest if self._bounded else None)

    def discover(self) -> list[Any]:
        return []

    def snapshot(self) -> Any:
        return None


class RedisStreamReader:
    """Reads its streams' entries after each split's last id (the runtime's SourceReader)."""

    def __init__(self, url: str, value_field: str | None) -> None:
        self._url = url
        self._value_field = value_field
        self._splits: dict[str, RedisStreamSplit] = {}  # unfinished; task thread
        self._no_more_splits = False
        self._client: Any = None

    def restore(self, state: list[Any]) -> None:
        self.add_splits(state)

    def add_splits(self, splits: list[Any]) -> None:
        for split in splits:
            if not split.finished:
                self._splits[split.stream] = split

    def notify_no_more_splits(self) -> None:
        self._no_more_splits = True

    def poll(self, max_records: int) -> tuple[list[Any], bool]:
        if not self._splits:
            return [], self._no_more_splits
        if self._client is None:
            self._client = redis.Redis.from_url(self._url, decode_responses=True)
        positions = {s.stream: s.last_id for s in self._splits.values()}
        count = max(1, max_records // len(positions))
        records: list[Any] = []
        answered = set()
        for stream, entries in self._client.xread(positions, count=count) or []:
            answered.add(stream)
            self._take(self._splits[stream], entries, records)
        self._finish_drained(answered)
        return records, self._no_more_splits and not self._splits

    def _finish_drained(self, answered: set[str]) -> None:
        """A bounded split XREAD has no entry for is finished: its remaining entries were
        deleted (XDEL, XTRIM), and entries added later get ids above its stop id."""
        for split in list(self._splits.values()):
            if split.stop_id is not None and split.stream not in answered:
                del self._splits[split.stream]

    def _take(self, split: RedisStreamSplit, entries: list[Any], out: list[Any]) -> None:
        stop = parse_id(split.stop_id) if split.stop_id is not None else None
        last = split.last_id
        field = self._value_field
        for entry_id, fields in entries:
            if stop is not None and parse_id(entry_id) > stop:
                last = split.stop_id or last
                break
            out.append(fields.get(field) if field is not None
                       else StreamEntry(split.stream, entry_id, fields))
            last = entry_id
        advanced = RedisStreamSplit(split.stream, last, split.stop_id)
        if advanced.finished:
            del self._splits[split.stream]
        else:
            self._splits[split.stream] = advanced

    def snapshot_state(self, checkpoint_id: int) -> list[Any]:
        return list(self._splits.values())

    def close(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None
