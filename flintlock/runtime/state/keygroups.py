"""Key groups: the unit of keyed state and of rescaling (DESIGN.md §1, §5).

A key maps to one of ``max_parallelism`` key groups through a hash that is the same in every
process and across restarts. Python's ``hash()`` is salted per process for ``str`` and
``bytes`` (and anything containing them), so it must never decide a key group: ``stable_hash``
uses CRC-32 for text and bytes, the (unsalted) built-in hash for numbers, and combines the
parts of tuples. A subtask owns a contiguous range of key groups, computed the way Flink does,
so that rescaling moves whole groups and any parallelism up to ``max_parallelism`` works.

Pure functions; no state, safe from any thread.
"""

from __future__ import annotations

import datetime
import decimal
import pickle
import zlib
from collections.abc import Iterator
from dataclasses import dataclass

from flintlock.common.ids import KeyGroup, SubtaskIndex

_MASK64 = (1 << 64) - 1


def _mix(value: int) -> int:
    """Murmur3's 64-bit finaliser: spreads the bits of a hash so ``% n`` is uniform."""
    value &= _MASK64
    value ^= value >> 33
    value = (value * 0xFF51AFD7ED558CCD) & _MASK64
    value ^= value >> 33
    value = (value * 0xC4CEB9FE1A85EC53) & _MASK64
    value ^= value >> 33
    return value


def stable_hash(key: object) -> int:
    """A non-negative hash of ``key`` that does not depend on the process or PYTHONHASHSEED."""
    if isinstance(key, str):
        return zlib.crc32(key.encode("utf-8", "surrogatepass"))
    if isinstance(key, (int, float, decimal.Decimal)) or key is None:
        return hash(key) & _MASK64
    if isinstance(key, (bytes, bytearray, memoryview)):
        return zlib.crc32(key)
    if isinstance(key, (tuple, list)):
        combined = 0x345678
        for part in key:
            combined = (combined * 1_000_003) ^ stable_hash(part)
        return (combined ^ len(key)) & _MASK64
    if isinstance(key, (datetime.date, datetime.time, datetime.timedelta)):
        return zlib.crc32(repr(key).encode())
    return zlib.crc32(pickle.dumps(key, protocol=5))


def assign_to_key_group(key: object, max_parallelism: int) -> KeyGroup:
    """The key group of ``key`` among ``max_parallelism`` groups."""
    return KeyGroup(_mix(stable_hash(key)) % max_parallelism)


def operator_index_for_key_group(
    key_group: int, max_parallelism: int, parallelism: int
) -> SubtaskIndex:
    """The subtask (of ``parallelism``) that owns ``key_group``."""
    return SubtaskIndex(key_group * parallelism // max_parallelism)


def assign_key_to_operator(key: object, max_parallelism: int, parallelism: int) -> SubtaskIndex:
    return operator_index_for_key_group(
        assign_to_key_group(key, max_parallelism), max_parallelism, parallelism
    )


@dataclass(frozen=True, slots=True)
class KeyGroupRange:
    """The key groups ``start..end`` (both inclusive) one subtask owns; empty if end < start."""

    start: int
    end: int

    @classmethod
    def for_subtask(cls, max_parallelism: int, parallelism: int, index: int) -> KeyGroupRange:
        if not 0 < parallelism <= max_parallelism:
            raise ValueError(
                f"parallelism {parallelism} must be between 1 and max parallelism {max_parallelism}"
            )
        if not 0 <= index < parallelism:
            raise ValueError(f"subtask index {index} out of range for parallelism {parallelism}")
        start = (index * max_parallelism + parallelism - 1) // parallelism
        end = ((index + 1) * max_parallelism + parallelism - 1) // parallelism - 1
        return cls(start, end)

    def __contains__(self, key_group: object) -> bool:
        return isinstance(key_group, int) and self.start <= key_group <= self.end

    def __len__(self) -> int:
        return max(0, self.end - self.start + 1)

    def __iter__(self) -> Iterator[int]:
        return iter(range(self.start, self.end + 1))

    def intersection(self, other: KeyGroupRange) -> KeyGroupRange:
        return KeyGroupRange(max(self.start, other.start), min(self.end, other.end))
