"""The ``nexmark`` table connector: the Nexmark event stream as Flink's nexmark suite declares
it (``'connector' = 'nexmark'``), on flintlock's ``NexmarkSource``.

Schema (checked, as Flink's factory checks it): ``event_type INT`` (0 person, 1 auction,
2 bid) and three ROW columns ``person``, ``auction``, ``bid``, of which the one of the event's
kind is set and the others are NULL (``SCHEMA_SQL``). Other columns may be computed — the
suite's ``dateTime AS CASE WHEN event_type = 0 THEN person.dateTime ... END`` with a
``WATERMARK FOR dateTime`` (the watermark takes effect once event time exists in SQL,
issue 32) — and ``VIEWS_SQL`` holds the suite's ``person``, ``auction`` and ``bid`` views.

Options: Flink's nexmark connector's (``events.num``, ``first-event.rate``,
``next-event.rate``, ``rate.shape``, ``rate.period``, ``rate.limited``, ``max-emit-speed``,
``*.proportion``, ``*.avg-size``, ``*.hot-ratio.*``) plus flintlock's ``tps`` (both rates),
``out-of-order.group-size``, ``auction.in-flight``, ``person.active``, ``base-time`` (epoch
milliseconds of event 0) and ``scan.parallelism``; see ``flintlock.datastream.connectors.
nexmark.config``. ``events.num`` = 0 (the default) is an unbounded source.

The factory runs on the driver; the source's readers on the source subtasks.
"""

from __future__ import annotations

from typing import Any

from flintlock.common.errors import ConfigurationError
from flintlock.common.types import row_of
from flintlock.common.watermark_strategy import WatermarkStrategy
from flintlock.datastream.connectors.nexmark import config as nexmark_config
from flintlock.datastream.connectors.nexmark.generator import (
    AUCTION,
    AUCTION_FIELDS,
    BID,
    BID_FIELDS,
    PERSON_FIELDS,
)
from flintlock.datastream.connectors.nexmark.source import NexmarkSource
from flintlock.datastream.data_stream import DataStream
from flintlock.table import types as t
from flintlock.table.connectors import registry
from flintlock.table.connectors._options import Options
from flintlock.table.connectors._sources import check_bounded
from flintlock.table.errors import ValidationError
from flintlock.table.plan.nodes import Field, TableSpec

PERSON_TYPE = ("ROW<`id` BIGINT, `name` STRING, `emailAddress` STRING, `creditCard` STRING, "
               "`city` STRING, `state` STRING, `dateTime` TIMESTAMP(3), `extra` STRING>")
AUCTION_TYPE = ("ROW<`id` BIGINT, `itemName` STRING, `description` STRING, "
                "`initialBid` BIGINT, `reserve` BIGINT, `dateTime` TIMESTAMP(3), "
                "`expires` TIMESTAMP(3), `seller` BIGINT, `category` BIGINT, "
                "`extra` STRING>")
BID_TYPE = ("ROW<`auction` BIGINT, `bidder` BIGINT, `price` BIGINT, `channel` STRING, "
            "`url` STRING, `dateTime` TIMESTAMP(3), `extra` STRING>")
PHYSICAL = (("event_type", "INT"), ("person", PERSON_TYPE), ("auction", AUCTION_TYPE),
            ("bid", BID_TYPE))

SCHEMA_SQL = (",\n".join(f"    `{name}` {type_sql}" for name, type_sql in PHYSICAL)
              + ",\n    `dateTime` AS CASE WHEN event_type = 0 THEN (person).`dateTime`"
              " WHEN event_type = 1 THEN (auction).`dateTime` ELSE (bid).`dateTime` END")
"""The columns of Flink's nexmark table, for a ``CREATE TABLE`` (add a WATERMARK clause once
SQL has event time)."""

VIEWS_SQL = {
    "person": "SELECT person.id, person.name, person.emailAddress, "
              "person.creditCard, person.city, person.state, `dateTime`, "
              "person.extra FROM {table} WHERE event_type = 0",
    "auction": "SELECT auction.id, auction.itemName, auction.description, "
               "auction.initialBid, auction.reserve, `dateTime`, auction.expires, "
               "auction.seller, auction.category, auction.extra FROM {table} "
               "WHERE event_type = 1",
    "bid": "SELECT bid.auction, bid.bidder, bid.price, bid.channel, bid.url, "
           "`dateTime`, bid.extra FROM {table} WHERE event_type = 2",
}
"""The suite's views over the nexmark table (``{table}``: its name). A ROW column's field is
written ``person.id`` as the suite writes it (``person`` names the ROW column: no table in
scope has that name)."""


def create_statements(table: str = "nexmark", **options: str) -> list[str]:
    """``CREATE TABLE`` for the nexmark table and ``CREATE VIEW`` for its three views."""
    with_options = ", ".join(f"'{k}' = '{v}'" for k, v in {"connector": "nexmark",
                                                            **options}.items())
    statements = [f"CREATE TABLE {table} (\n{SCHEMA_SQL}\n) WITH ({with_options})"]
    statements += [f"CREATE VIEW {name} AS {query.format(table=table)}"
                   for name, query in VIEWS_SQL.items()]
    return statements


def _nested(names: tuple[str, ...]) -> Any:
    return lambda values: row_of(list(values), fields=list(names))


_PERSON_ROW, _AUCTION_ROW, _BID_ROW = (_nested(PERSON_FIELDS), _nested(AUCTION_FIELDS),
                                       _nested(BID_FIELDS))


def to_row(event_type: int, values: tuple[Any, ...]) -> Any:
    """The table row of one event: ``[event_type, person, auction, bid]``."""
    if event_type == BID:
        return row_of([BID, None, None, _BID_ROW(values)])
    if event_type == AUCTION:
        return row_of([AUCTION, None, _AUCTION_ROW(values), None])
    return row_of([event_type, _PERSON_ROW(values), None, None])


def check_schema(spec: TableSpec) -> None:
    """The physical columns must be Flink's nexmark schema (nullability aside)."""
    expected = [(name, t.sql_string(t.from_sql_string(sql))) for name, sql in PHYSICAL]
    found = [(f.name, t.sql_string(f.type).replace(" NOT NULL", "")) for f in spec.physical]
    if found != expected:
        raise ValidationError(
            "The nexmark source table must be in the schema of\n"
            + ", ".join(f"`{n}` {s}" for n, s in expected) + "\nHowever, it is\n"
            + ", ".join(f"`{n}` {s}" for n, s in found))


def config_of(spec: TableSpec) -> nexmark_config.NexmarkConfig:
    options = {k: v for k, v in spec.options.items()
               if k not in ("connector", "scan.parallelism")}
    try:
        return nexmark_config.from_options(options)
    except ConfigurationError as error:
        raise ValidationError(f"Invalid nexmark options of table '{spec.name}': {error}"
                              ) from error


class NexmarkFactory:
    identifier = "nexmark"

    def required_options(self) -> set[str]:
        return set()

    def optional_options(self) -> set[str]:
        return set(nexmark_config.OPTIONS) | {"scan.parallelism"}

    def create_source(self, spec: TableSpec, context: registry.ConnectorContext) -> DataStream:
        check_schema(spec)
        source = NexmarkSource(config_of(spec), to_row)
        check_bounded(spec, context, source.is_bounded())
        stream = context.env.from_source(source, WatermarkStrategy.no_watermarks(),
                                         f"nexmark[{spec.name}]")
        parallelism = Options(spec.options).get_int("scan.parallelism")
        if parallelism is not None:
            stream.set_parallelism(parallelism)
        return stream

    def create_sink(self, stream: DataStream, spec: TableSpec, fields: tuple[Field, ...],
                    context: registry.ConnectorContext) -> Any:
        raise ValidationError(f"Connector '{self.identifier}' can only be used as a source. "
                              "It cannot be used as a sink.")

    def accepts_updates(self, spec: TableSpec) -> bool:
        return False


FACTORY = NexmarkFactory()
registry.FACTORIES[FACTORY.identifier] = FACTORY

__all__ = ["SCHEMA_SQL", "VIEWS_SQL", "NexmarkFactory", "check_schema", "create_statements",
           "to_row"]
