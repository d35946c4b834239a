"""PyFlink's time values: ``Duration`` (a span), ``Time`` (the older span type used by state
TTL and windows) and ``Instant`` (a point on the epoch time line).

All three are immutable value objects: equal when they denote the same amount, hashable,
picklable. ``Duration`` keeps whole nanoseconds (as ``java.time.Duration`` does); ``Time`` keeps
milliseconds (as ``org.apache.flink.api.common.time.Time`` does). Both answer
``to_milliseconds()``, which is what the rest of flintlock reads (state TTL, checkpoint
timeouts, watermark strategies).

Used by user programs and by ``flintlock.datastream``; no thread owns anything here.
"""

from __future__ import annotations

from typing import Any

_NANOS_PER_MILLI = 1_000_000
_NANOS_PER_SECOND = 1_000_000_000
_MILLIS_PER_SECOND = 1_000
_MILLIS_PER_MINUTE = 60_000
_MILLIS_PER_HOUR = 3_600_000
_MILLIS_PER_DAY = 86_400_000


def _whole(value: Any, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{what} must be an int, got {type(value).__name__} {value!r}")
    return value


class Duration:
    """A span of time with nanosecond precision, as PyFlink's ``Duration``."""

    __slots__ = ("_nanos",)
    _nanos: int

    def __init__(self, nanos: int) -> None:
        object.__setattr__(self, "_nanos", _whole(nanos, "Duration nanos"))

    @staticmethod
    def of_nanos(nanos: int) -> Duration:
        return Duration(_whole(nanos, "nanos"))

    @staticmethod
    def of_millis(millis: int) -> Duration:
        return Duration(_whole(millis, "millis") * _NANOS_PER_MILLI)

    @staticmethod
    def of_seconds(seconds: int) -> Duration:
        return Duration(_whole(seconds, "seconds") * _NANOS_PER_SECOND)

    @staticmethod
    def of_minutes(minutes: int) -> Duration:
        return Duration.of_millis(_whole(minutes, "minutes") * _MILLIS_PER_MINUTE)

    @staticmethod
    def of_hours(hours: int) -> Duration:
        return Duration.of_millis(_whole(hours, "hours") * _MILLIS_PER_HOUR)

    @staticmethod
    def of_days(days: int) -> Duration:
        return Duration.of_millis(_whole(days, "days") * _MILLIS_PER_DAY)

    def to_milliseconds(self) -> int:
        """Whole milliseconds, truncated toward zero as ``java.time.Duration.toMillis``."""
        if self._nanos < 0:
            return -(-self._nanos // _NANOS_PER_MILLI)
        return self._nanos // _NANOS_PER_MILLI

    def to_nanos(self) -> int:
        return self._nanos

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("Duration is immutable")

    def __reduce__(self) -> tuple[Any, tuple[int]]:
        return (Duration, (self._nanos,))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Duration) and other._nanos == self._nanos

    def __lt__(self, other: Duration) -> bool:
        return self._nanos < other._nanos

    def __hash__(self) -> int:
        return hash(("Duration", self._nanos))

    def __repr__(self) -> str:
        if self._nanos % _NANOS_PER_MILLI == 0:
            return f"Duration.of_millis({self._nanos // _NANOS_PER_MILLI})"
        return f"Duration.of_nanos({self._nanos})"


class Time:
    """A span of time in milliseconds, as PyFlink's ``Time`` (used by state TTL, windows)."""

    __slots__ = ("_millis",)
    _millis: int

    def __init__(self, milliseconds: int) -> None:
        object.__setattr__(self, "_millis", _whole(milliseconds, "Time milliseconds"))

    @staticmethod
    def milliseconds(milliseconds: int) -> Time:
        return Time(_whole(milliseconds, "milliseconds"))

    @staticmethod
    def seconds(seconds: int) -> Time:
        return Time(_whole(seconds, "seconds") * _MILLIS_PER_SECOND)

    @staticmethod
    def minutes(minutes: int) -> Time:
        return Time(_whole(minutes, "minutes") * _MILLIS_PER_MINUTE)

    @staticmethod
    def hours(hours: int) -> Time:
        return Time(_whole(hours, "hours") * _MILLIS_PER_HOUR)

    @staticmethod
    def days(days: int) -> Time:
        return Time(_whole(days, "days") * _MILLIS_PER_DAY)

    def to_milliseconds(self) -> int:
        return self._millis

    def to_duration(self) -> Duration:
        return Duration.of_millis(self._millis)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("Time is immutable")

    def __reduce__(self) -> tuple[Any, tuple[int]]:
        return (Time, (self._millis,))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Time) and other._millis == self._millis

    def __hash__(self) -> int:
        return hash(("Time", self._millis))

    def __str__(self) -> str:
        return f"{self._millis} ms"

    def __repr__(self) -> str:
        return f"Time.milliseconds({self._millis})"


class Instant:
    """A point on the time line: seconds since the epoch plus nanoseconds (0 ≤ nanos < 1e9)."""

    __slots__ = ("_nanos", "_seconds")
    _nanos: int
    _seconds: int

    def __init__(self, seconds: int, nanos: int) -> None:
        extra, nanos = divmod(_whole(nanos, "nanos"), _NANOS_PER_SECOND)
        object.__setattr__(self, "_seconds", _whole(seconds, "seconds") + extra)
        object.__setattr__(self, "_nanos", nanos)

    @staticmethod
    def of_epoch_milli(epoch_milli: int) -> Instant:
        seconds, millis = divmod(_whole(epoch_milli, "epoch_milli"), _MILLIS_PER_SECOND)
        return Instant(seconds, millis * _NANOS_PER_MILLI)

    def to_epoch_milli(self) -> int:
        return self._seconds * _MILLIS_PER_SECOND + self._nanos // _NANOS_PER_MILLI

    @property
    def seconds(self) -> int:
        return self._seconds

    @property
    def nanos(self) -> int:
        return self._nanos

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("Instant is immutable")

    def __reduce__(self) -> tuple[Any, tuple[int, int]]:
        return (Instant, (self._seconds, self._nanos))

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, Instant)
            and other._seconds == self._seconds
            and other._nanos == self._nanos
        )

    def __lt__(self, other: Instant) -> bool:
        return (self._seconds, self._nanos) < (other._seconds, other._nanos)

    def __hash__(self) -> int:
        return hash(("Instant", self._seconds, self._nanos))

    def __repr__(self) -> str:
        return f"Instant<{self._seconds}, {self._nanos}>"
