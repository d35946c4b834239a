"""The Nexmark events: ``event(config, number)`` is the event with that number, a pure function.

The model, as the Nexmark specification and Beam's and Flink's Nexmark generators define it
(written here from their description; see docs/table-connectors.md, "nexmark"):

* **Ids.** Person and auction ids count up from 1000 in event-id order: the person id of event
  id e is ``1000 + (e // total) * person + min(e % total, person - 1)`` (the last person
  generated so far), likewise for auctions. Ids are *base 0* below, plus 1000 on output.
* **Active people and in-flight auctions.** A random person (a seller or a bidder) is one of
  the last ``num_active_people`` people, plus 10 ids not generated yet; a random auction is one
  of the last ``num_in_flight_auctions`` auctions, plus 10 ahead. So joins find matches on a
  stream of any length, and some bids name auctions that appear a little later.
* **Hot sellers, bidders and auctions.** With probability ``1 - 1/ratio`` an auction's seller is
  the first person of the latest block of 100 people (``auction.hot-ratio.sellers``), a bid's
  bidder the second one (``bid.hot-ratio.bidders``), a bid's auction the first auction of the
  latest block of 100 (``bid.hot-ratio.auctions``); otherwise they are random as above.
* **Values.** Prices ``round(10 ** (6u) * 100)`` cents for u uniform in [0, 1); categories
  10-14; auctions expire a random time up to twice the time the next ``num_in_flight_auctions``
  auctions take to arrive; names from 11 first names x 9 last names, 10 US cities, 6 states;
  credit cards as four groups of four digits; e-mails ``<word>@<word>.com``; bids carry a
  ``channel`` (half of them one of four hot channels, else one of 10,000 ``channel-<i>``) and
  its ``url``; ``extra`` pads each event to its average size (``*.avg-size``).
* **Bidder ids** get 1000 added once (Flink's generator adds it twice, so its bidders miss the
  person ids; Beam's adds it once, as here).

Values are tuples in the field order of Flink's nexmark table schema (``PERSON_FIELDS`` ...),
timestamps ``datetime`` values in UTC without a zone (TIMESTAMP(3)). Any thread.
"""

from __future__ import annotations

import datetime
from functools import lru_cache
from typing import Any

from flintlock.datastream.connectors.nexmark._random import (
    Bits,
    bits_of,
    next_extra,
    next_string,
)
from flintlock.datastream.connectors.nexmark.config import NexmarkConfig

PERSON, AUCTION, BID = 0, 1, 2
"""``event_type`` values, as Flink's nexmark table has them."""

PERSON_FIELDS = ("id", "name", "emailAddress", "creditCard", "city", "state", "dateTime",
                 "extra")
AUCTION_FIELDS = ("id", "itemName", "description", "initialBid", "reserve", "dateTime",
                  "expires", "seller", "category", "extra")
BID_FIELDS = ("auction", "bidder", "price", "channel", "url", "dateTime", "extra")

FIRST_PERSON_ID = 1000
FIRST_AUCTION_ID = 1000
FIRST_CATEGORY_ID = 10
NUM_CATEGORIES = 5
ID_LEAD = 10
HOT_BLOCK = 100
HOT_CHANNELS = ("Google", "Facebook", "Baidu", "Apple")
NUM_CHANNELS = 10_000

_STATES = ("AZ", "CA", "ID", "OR", "WA", "WY")
_CITIES = ("Phoenix", "Los Angeles", "San Francisco", "Boise", "Portland", "Bend", "Redmond",
           "Seattle", "Kent", "Cheyenne")
_FIRST_NAMES = ("Peter", "Paul", "Luke", "John", "Saul", "Vicky", "Kate", "Julie", "Sarah",
                "Deiter", "Walter")
_LAST_NAMES = ("Shultz", "Abrams", "Spencer", "White", "Bartels", "Walton", "Smith", "Jones",
               "Noris")
_EPOCH = datetime.datetime(1970, 1, 1)
_MS = datetime.timedelta(milliseconds=1)


def to_datetime(epoch_ms: int) -> datetime.datetime:
    """A TIMESTAMP(3) value: the UTC wall time of ``epoch_ms``, without a zone."""
    return _EPOCH + epoch_ms * _MS


def event(config: NexmarkConfig, number: int) -> tuple[int, tuple[Any, ...], int]:
    """``(event_type, values, timestamp_ms)`` of the event with this number."""
    event_id = config.adjusted_number(number)
    timestamp = config.timestamp_for(event_id)
    slot = event_id % config.total_proportion
    bits = Bits(bits_of(event_id))
    if slot < config.person_proportion:
        return PERSON, person(config, event_id, bits, timestamp), timestamp
    if slot < config.person_proportion + config.auction_proportion:
        return AUCTION, auction(config, event_id, bits, timestamp), timestamp
    return BID, bid(config, event_id, bits, timestamp), timestamp


def last_person(config: NexmarkConfig, event_id: int) -> int:
    """The base-0 id of the last person generated at or before ``event_id``."""
    epoch, offset = divmod(event_id, config.total_proportion)
    return epoch * config.person_proportion + min(offset, config.person_proportion - 1)


def last_auction(config: NexmarkConfig, event_id: int) -> int:
    """The base-0 id of the last auction generated at or before ``event_id``."""
    epoch, offset = divmod(event_id, config.total_proportion)
    people, auctions = config.person_proportion, config.auction_proportion
    if offset < people:
        epoch, offset = epoch - 1, auctions - 1
    elif offset >= people + auctions:
        offset = auctions - 1
    else:
        offset -= people
    return epoch * auctions + offset


def random_person(config: NexmarkConfig, event_id: int, bits: Bits) -> int:
    """One of the active people (base 0), or a few ids ahead."""
    people = last_person(config, event_id) + 1
    active = min(people, config.num_active_people)
    return people - active + bits.below(active + ID_LEAD)


def random_auction(config: NexmarkConfig, event_id: int, bits: Bits) -> int:
    """One of the auctions in flight (base 0), or a few ids ahead."""
    newest = last_auction(config, event_id)
    oldest = max(newest - config.num_in_flight_auctions, 0)
    return oldest + bits.below(newest - oldest + 1 + ID_LEAD)


def price(bits: Bits) -> int:
    return int(10.0 ** (bits.unit() * 6.0) * 100.0 + 0.5)  # Java's Math.round


def person(config: NexmarkConfig, event_id: int, bits: Bits, timestamp: int) -> tuple[Any, ...]:
    name = f"{_FIRST_NAMES[bits.below(11)]} {_LAST_NAMES[bits.below(9)]}"
    email = f"{next_string(bits, 7)}@{next_string(bits, 5)}.com"
    card = " ".join(f"{bits.below(10000):04d}" for _ in range(4))
    city = _CITIES[bits.below(len(_CITIES))]
    state = _STATES[bits.below(len(_STATES))]
    size = 8 + len(name) + len(email) + len(card) + len(city) + len(state)
    extra = next_extra(bits, size, config.avg_person_bytes)
    return (last_person(config, event_id) + FIRST_PERSON_ID, name, email, card, city, state,
            to_datetime(timestamp), extra)


def auction(config: NexmarkConfig, event_id: int, bits: Bits, timestamp: int
            ) -> tuple[Any, ...]:
    if bits.below(config.hot_sellers_ratio) > 0:
        seller = (last_person(config, event_id) // HOT_BLOCK) * HOT_BLOCK
    else:
        seller = random_person(config, event_id, bits)
    category = FIRST_CATEGORY_ID + bits.below(NUM_CATEGORIES)
    initial = price(bits)
    expires = timestamp + _auction_length_ms(config, event_id, bits, timestamp)
    item = next_string(bits, 20)
    description = next_string(bits, 100)
    reserve = initial + price(bits)
    size = 8 + len(item) + len(description) + 40
    extra = next_extra(bits, size, config.avg_auction_bytes)
    return (last_auction(config, event_id) + FIRST_AUCTION_ID, item, description, initial,
            reserve, to_datetime(timestamp), to_datetime(expires), seller + FIRST_PERSON_ID,
            category, extra)


def _auction_length_ms(config: NexmarkConfig, event_id: int, bits: Bits, timestamp: int
                       ) -> int:
    """Up to twice the time until ``num_in_flight_auctions`` more auctions have come."""
    ahead = config.num_in_flight_auctions * config.total_proportion // config.auction_proportion
    horizon = config.timestamp_for(event_id + ahead) - timestamp
    return 1 + bits.below(max(horizon * 2, 1))


def bid(config: NexmarkConfig, event_id: int, bits: Bits, timestamp: int) -> tuple[Any, ...]:
    if bits.below(config.hot_auction_ratio) > 0:
        auction_id = (last_auction(config, event_id) // HOT_BLOCK) * HOT_BLOCK
    else:
        auction_id = random_auction(config, event_id, bits)
    if bits.below(config.hot_bidders_ratio) > 0:
        bidder = (last_person(config, event_id) // HOT_BLOCK) * HOT_BLOCK + 1
    else:
        bidder = random_person(config, event_id, bits)
    amount = price(bits)
    if bits.below(2) > 0:
        hot = bits.below(len(HOT_CHANNELS))
        channel, url = HOT_CHANNELS[hot], hot_urls()[hot]
    else:
        channel, url = channels()[bits.below(NUM_CHANNELS)]
    extra = next_extra(bits, 32, config.avg_bid_bytes)
    return (auction_id + FIRST_AUCTION_ID, bidder + FIRST_PERSON_ID, amount, channel, url,
            to_datetime(timestamp), extra)


def _base_url(bits: Bits) -> str:
    parts = "/".join(next_string(bits, 5, "_") for _ in range(3))
    return f"https://www.nexmark.com/{parts}/item.htm?query=1"


@lru_cache(maxsize=1)
def hot_urls() -> tuple[str, ...]:
    """The URLs of the four hot channels (fixed, like every random choice here)."""
    return tuple(_base_url(Bits(bits_of(2**63 + i))) for i in range(len(HOT_CHANNELS)))


@lru_cache(maxsize=1)
def channels() -> tuple[tuple[str, str], ...]:
    """The 10,000 other channels and their URLs; nine in ten URLs name a ``channel_id``
    (the channel number with its 32 bits reversed, as a positive Java int)."""
    found = []
    for number in range(NUM_CHANNELS):
        bits = Bits(bits_of(2**62 + number))
        url = _base_url(bits)
        if bits.below(10) > 0:
            url += f"&channel_id={_reversed_int32(number)}"
        found.append((f"channel-{number}", url))
    return tuple(found)


def _reversed_int32(value: int) -> int:
    reversed_bits = int(f"{value & 0xFFFFFFFF:032b}"[::-1], 2)
    return abs(reversed_bits - (1 << 32) if reversed_bits >= 1 << 31 else reversed_bits)


__all__ = ["AUCTION", "AUCTION_FIELDS", "BID", "BID_FIELDS", "PERSON", "PERSON_FIELDS",
           "event", "last_auction", "last_person", "to_datetime"]
