"""The Nexmark generator's parameters (``NexmarkConfig``) and its clock: which event number
becomes which kind of event and at which event time.

The model (the Nexmark specification as Beam's and Flink's Nexmark suites generate it):

* **Event numbers** 0, 1, 2, ... are the whole stream; every event is a pure function of its
  number and this config, so any split of the numbers over any parallelism yields the same
  events, and a file written from them holds exactly what a source emits.
* **Kinds**: the number's *event id* taken modulo ``person + auction + bid`` proportions
  (1 : 3 : 46 by default) picks a person (the first slot), an auction (the next three) or a
  bid (the rest).
* **Out-of-orderness**: with ``out_of_order_group_size`` g > 1, the event with number n gets
  the content and timestamp of the *adjusted* number ``(n // g) * g + (n * 953) % g`` (a
  permutation inside each group of g, as in Beam), so timestamps go back and forth within a
  group; ``watermark_for(n)`` is the timestamp no later event of the stream goes below. The
  last group of a bounded stream keeps its order when it is not full (so the event ids stay
  exactly 0..N-1).
* **Event time**: event number n happens at ``base_time`` plus n inter-event delays. The delay
  comes from the rate (events per second for the whole stream): one rate when
  ``first_event_rate == next_event_rate``, otherwise the rate follows ``rate_shape`` (SQUARE:
  alternates between the two; SINE: ten steps of a cosine between them), each step lasting
  ``rate_period_s / steps`` seconds, in integer microseconds as Beam computes it. One timeline
  for the whole stream, whatever the parallelism (Flink's source gives each of its p generators
  its own timeline p times slower; flintlock keeps one, so the events do not depend on p).
* ``base_time`` is fixed (2015-07-15 00:00:00 UTC, Beam's) unless set, so runs repeat.

Pure values; any thread.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace

from flintlock.common.errors import InvalidConfigValueError, UnknownConfigKeyError

BASE_TIME_MS = 1_436_918_400_000
"""2015-07-15 00:00:00 UTC, the default ``base-time``."""

SINE_STEPS = 10


@dataclass(frozen=True)
class NexmarkConfig:
    """Everything that decides the events; ``from_options`` reads Flink's option names."""

    events: int | None = None  # None: unbounded
    first_event_rate: int = 10_000
    next_event_rate: int = 10_000
    rate_shape: str = "SQUARE"
    rate_period_s: int = 600
    rate_limited: bool = False
    person_proportion: int = 1
    auction_proportion: int = 3
    bid_proportion: int = 46
    avg_person_bytes: int = 200
    avg_auction_bytes: int = 500
    avg_bid_bytes: int = 100
    hot_auction_ratio: int = 2
    hot_bidders_ratio: int = 4
    hot_sellers_ratio: int = 4
    num_in_flight_auctions: int = 100
    num_active_people: int = 1000
    out_of_order_group_size: int = 1
    base_time_ms: int = BASE_TIME_MS
    _steps: tuple[tuple[int, int], ...] = field(default=(), init=False, repr=False,
                                                compare=False)
    """(events in the step, microseconds between two events) per step of the rate shape."""

    def __post_init__(self) -> None:
        for name in ("first_event_rate", "next_event_rate", "rate_period_s",
                     "out_of_order_group_size", "hot_auction_ratio", "hot_bidders_ratio",
                     "hot_sellers_ratio", "num_in_flight_auctions", "num_active_people"):
            if getattr(self, name) < 1:
                raise InvalidConfigValueError(name, getattr(self, name), "a positive integer")
        for name in ("person_proportion", "auction_proportion", "bid_proportion"):
            if getattr(self, name) < 1:
                raise InvalidConfigValueError(name, getattr(self, name), "a positive integer")
        if self.events is not None and self.events < 0:
            raise InvalidConfigValueError("events", self.events, "0 (unbounded) or more")
        if self.rate_shape not in ("SQUARE", "SINE"):
            raise InvalidConfigValueError("rate.shape", self.rate_shape, "SQUARE or SINE")
        delays = _inter_event_delays_us(self)
        step_us = self.step_length_s * 1_000_000
        object.__setattr__(self, "_steps", tuple((step_us // d, d) for d in delays))

    @property
    def total_proportion(self) -> int:
        return self.person_proportion + self.auction_proportion + self.bid_proportion

    @property
    def step_length_s(self) -> int:
        steps = 2 if self.rate_shape == "SQUARE" else SINE_STEPS
        return (self.rate_period_s + steps - 1) // steps

    def with_events(self, events: int | None) -> NexmarkConfig:
        return replace(self, events=events)

    def adjusted_number(self, number: int) -> int:
        """The number whose content and timestamp event ``number`` carries (out-of-order)."""
        group = self.out_of_order_group_size
        if group == 1:
            return number
        base = (number // group) * group
        if self.events is not None and base + group > self.events:
            return number
        return base + (number * 953) % group

    def timestamp_for(self, number: int) -> int:
        """Event time in epoch milliseconds of the (adjusted) event number ``number``."""
        steps = self._steps
        if len(steps) == 1:
            return self.base_time_ms + number * steps[0][1] // 1000
        per_epoch = sum(count for count, _ in steps)
        epoch_ms = sum(count * delay // 1000 for count, delay in steps)
        epoch, rest = divmod(number, per_epoch)
        offset_ms = 0
        for count, delay in steps:
            if rest < count:
                return self.base_time_ms + epoch * epoch_ms + offset_ms + rest * delay // 1000
            rest -= count
            offset_ms += count * delay // 1000
        raise AssertionError("unreachable: the steps cover an epoch")

    def watermark_for(self, number: int) -> int:
        """No event numbered ``number`` or later has a timestamp below this."""
        group = self.out_of_order_group_size
        return self.timestamp_for((number // group) * group)


def _period_us(rate: int) -> int:
    return (1_000_000 + rate // 2) // rate


def _inter_event_delays_us(config: NexmarkConfig) -> tuple[int, ...]:
    first, following = config.first_event_rate, config.next_event_rate
    if first == following:
        return (_period_us(first),)
    if config.rate_shape == "SQUARE":
        return (_period_us(first), _period_us(following))
    middle, amplitude = (first + following) / 2.0, (first - following) / 2.0
    return tuple(_period_us(max(1, _java_round(middle + amplitude * math.cos(
        2.0 * math.pi * i / SINE_STEPS)))) for i in range(SINE_STEPS))


def _java_round(value: float) -> int:
    return math.floor(value + 0.5)


# --- options, as Flink's nexmark connector names them --------------------------------------

_INT_OPTIONS = {
    "first-event.rate": "first_event_rate",
    "next-event.rate": "next_event_rate",
    "person.proportion": "person_proportion",
    "auction.proportion": "auction_proportion",
    "bid.proportion": "bid_proportion",
    "bid.hot-ratio.auctions": "hot_auction_ratio",
    "bid.hot-ratio.bidders": "hot_bidders_ratio",
    "auction.hot-ratio.sellers": "hot_sellers_ratio",
    "out-of-order.group-size": "out_of_order_group_size",
    "auction.in-flight": "num_in_flight_auctions",
    "person.active": "num_active_people",
}
_SIZE_OPTIONS = {
    "person.avg-size": "avg_person_bytes",
    "auction.avg-size": "avg_auction_bytes",
    "bid.avg-size": "avg_bid_bytes",
}
OPTIONS = frozenset({*_INT_OPTIONS, *_SIZE_OPTIONS, "events.num", "tps", "rate.shape",
                     "rate.period", "rate.limited", "max-emit-speed", "base-time"})
"""Every option ``from_options`` knows (Flink's, plus flintlock's ``tps``,
``out-of-order.group-size``, ``auction.in-flight``, ``person.active`` and ``base-time``)."""

_SIZE_UNITS = {"": 1, "b": 1, "bytes": 1, "k": 1024, "kb": 1024, "m": 1 << 20, "mb": 1 << 20}
_DURATION_UNITS = {"": 1, "s": 1, "sec": 1, "second": 1, "seconds": 1, "min": 60, "m": 60,
                   "minute": 60, "minutes": 60, "h": 3600, "hour": 3600, "hours": 3600,
                   "ms": 0.001}


def from_options(options: Mapping[str, str]) -> NexmarkConfig:
    """A config from option strings; an unknown key or a bad value raises a ``ConfigurationError``
    naming it."""
    values: dict[str, object] = {}
    for key, text in options.items():
        if key not in OPTIONS:
            raise UnknownConfigKeyError(key, tuple(sorted(OPTIONS)))
        if key in _INT_OPTIONS:
            values[_INT_OPTIONS[key]] = _integer(key, text)
        elif key in _SIZE_OPTIONS:
            values[_SIZE_OPTIONS[key]] = int(_scaled(key, text, _SIZE_UNITS,
                                                     "a size like 200b"))
    if "tps" in options:
        values["first_event_rate"] = values["next_event_rate"] = _integer("tps", options["tps"])
    if "events.num" in options:
        events = _integer("events.num", options["events.num"])
        values["events"] = events if events > 0 else None
    if "rate.shape" in options:
        values["rate_shape"] = options["rate.shape"].strip().upper()
    if "rate.period" in options:
        values["rate_period_s"] = int(_scaled("rate.period", options["rate.period"],
                                              _DURATION_UNITS, "a duration like 600 s"))
    limited = _boolean(options, "rate.limited", False)
    values["rate_limited"] = limited or not _boolean(options, "max-emit-speed", True)
    if "base-time" in options:
        values["base_time_ms"] = _integer("base-time", options["base-time"])
    return NexmarkConfig(**values)  # type: ignore[arg-type]


def _integer(key: str, text: str) -> int:
    try:
        return int(text.strip())
    except ValueError:
        raise InvalidConfigValueError(key, text, "an integer") from None


def _boolean(options: Mapping[str, str], key: str, default: bool) -> bool:
    text = options.get(key)
    if text is None:
        return default
    if text.strip().lower() not in ("true", "false"):
        raise InvalidConfigValueError(key, text, "true or false")
    return text.strip().lower() == "true"


def _scaled(key: str, text: str, units: Mapping[str, float], expected: str) -> float:
    match = re.fullmatch(r"\s*(\d+)\s*([a-zA-Z]*)\s*", text)
    if match is None or match.group(2).lower() not in units:
        raise InvalidConfigValueError(key, text, expected)
    return int(match.group(1)) * units[match.group(2).lower()]


__all__ = ["BASE_TIME_MS", "OPTIONS", "NexmarkConfig", "from_options"]
