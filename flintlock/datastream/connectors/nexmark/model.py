"""The Nexmark events as DataStream records: ``Person``, ``Auction`` and ``Bid``, frozen
dataclasses with the fields of Flink's nexmark table (in that order, snake_case names).

Times are ``datetime`` values in UTC without a zone (the table's TIMESTAMP(3)); prices are in
cents. Values; any thread.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Person:
    """A new person registered (a seller or a bidder)."""

    id: int
    name: str
    email_address: str
    credit_card: str
    city: str
    state: str
    date_time: datetime.datetime
    extra: str


@dataclass(frozen=True, slots=True)
class Auction:
    """A new auction: an item put up for sale by ``seller`` until ``expires``."""

    id: int
    item_name: str
    description: str
    initial_bid: int
    reserve: int
    date_time: datetime.datetime
    expires: datetime.datetime
    seller: int
    category: int
    extra: str


@dataclass(frozen=True, slots=True)
class Bid:
    """A bid of ``price`` cents by ``bidder`` for ``auction``, through ``channel``."""

    auction: int
    bidder: int
    price: int
    channel: str
    url: str
    date_time: datetime.datetime
    extra: str


Event = Person | Auction | Bid

__all__ = ["Auction", "Bid", "Event", "Person"]
