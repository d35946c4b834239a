"""The Nexmark queries that need no event time, in Flink SQL (run by flintlock and PyFlink) and
in Spark SQL where Spark Structured Streaming can run them (issue 33).

Written from the Nexmark specification and the query descriptions of Flink's nexmark suite
(``person``, ``auction``, ``bid`` are the suite's views, here tables over the generated files).
Each query is its SELECT and its sink's columns (a blackhole table for the timed runs).
Changes from the suite, each said where it is: q10 writes to a blackhole instead of a
partitioned file sink with partition-commit policies (flintlock has none); q14's Java UDF
``count_char(extra, 'c')`` is the built-in expression counting the same characters.

``key`` is the unique key of an updating query's result (its GROUP BY or PARTITION BY
columns). ``result`` says how results are compared: ``rows`` (the final multiset of rows, exactly),
``keys`` (ties in an ORDER BY make the chosen row engine-dependent: only the number of rows is
compared) — see ``run.py``.

Event-time queries (``event_time=True``: q5, q7, q8, q11) declare the suite's watermark on
the tables they read, ``WATERMARK FOR `dateTime` AS `dateTime` - INTERVAL '4' SECOND`` (the
files carry each event's time in ``dateTime``); the others read the tables without one. q13
reads Flink's bounded side table ``side_input`` (``write_side_input``). Queries not run, and
why: ``NOT_RUN``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

BID_COLUMNS = ("auction BIGINT, bidder BIGINT, price BIGINT, channel STRING, url STRING, "
               "`dateTime` TIMESTAMP(3), extra STRING")
AUCTION_COLUMNS = ("id BIGINT, itemName STRING, description STRING, initialBid BIGINT, "
                   "reserve BIGINT, `dateTime` TIMESTAMP(3), expires TIMESTAMP(3), "
                   "seller BIGINT, category BIGINT, extra STRING")
PERSON_COLUMNS = ("id BIGINT, name STRING, emailAddress STRING, creditCard STRING, "
                  "city STRING, state STRING, `dateTime` TIMESTAMP(3), extra STRING")
SIDE_INPUT_COLUMNS = "key BIGINT, `value` STRING"
TABLE_COLUMNS = {"person": PERSON_COLUMNS, "auction": AUCTION_COLUMNS, "bid": BID_COLUMNS,
                 "side_input": SIDE_INPUT_COLUMNS}
WATERMARK = ", WATERMARK FOR `dateTime` AS `dateTime` - INTERVAL '4' SECOND"
SIDE_INPUT_KEYS = 10_000


@dataclass(frozen=True)
class Query:
    name: str
    title: str
    sql: str
    sink: str
    tables: tuple[str, ...]
    spark_sql: str | None = None
    spark_mode: str = "append"
    spark_gap: str = ""
    result: str = "rows"
    event_time: bool = False
    """The tables get the suite's WATERMARK on ``dateTime`` (window, event-time queries)."""
    key: tuple[int, ...] | None = None
    """Positions of the result's unique key for an updating query: its changelog is applied
    by key, since an engine may send an update as +U alone (PyFlink's collect() does)."""


_RANKS = """
     count(*) FILTER (WHERE price < 10000) AS rank1_bids,
     count(*) FILTER (WHERE price >= 10000 AND price < 1000000) AS rank2_bids,
     count(*) FILTER (WHERE price >= 1000000) AS rank3_bids"""
_DISTINCT_RANKS = """
     count(DISTINCT bidder) AS total_bidders,
     count(DISTINCT bidder) FILTER (WHERE price < 10000) AS rank1_bidders,
     count(DISTINCT bidder) FILTER (WHERE price >= 10000 AND price < 1000000) AS rank2_bidders,
     count(DISTINCT bidder) FILTER (WHERE price >= 1000000) AS rank3_bidders,
     count(DISTINCT auction) AS total_auctions,
     count(DISTINCT auction) FILTER (WHERE price < 10000) AS rank1_auctions,
     count(DISTINCT auction) FILTER (WHERE price >= 10000 AND price < 1000000)
         AS rank2_auctions,
     count(DISTINCT auction) FILTER (WHERE price >= 1000000) AS rank3_auctions"""
_DISTINCT_SINK = ("total_bids BIGINT, rank1_bids BIGINT, rank2_bids BIGINT, rank3_bids BIGINT, "
                  "total_bidders BIGINT, rank1_bidders BIGINT, rank2_bidders BIGINT, "
                  "rank3_bidders BIGINT, total_auctions BIGINT, rank1_auctions BIGINT, "
                  "rank2_auctions BIGINT, rank3_auctions BIGINT")
_NO_DISTINCT = "Spark: distinct aggregations are not supported on streaming DataFrames"
_NO_ROW_NUMBER = "Spark: ROW_NUMBER (a non-time window) is not supported on streaming DataFrames"
_CHANNEL_ID = "REGEXP_EXTRACT(url, '(&|^)channel_id=([^&]*)', 2)"
_SPARK_CHANNEL_ID = "NULLIF(regexp_extract(url, '(&|^)channel_id=([^&]*)', 2), '')"
_Q21 = """SELECT auction, bidder, price, channel,
    CASE
        WHEN lower(channel) = 'apple' THEN '0'
        WHEN lower(channel) = 'google' THEN '1'
        WHEN lower(channel) = 'facebook' THEN '2'
        WHEN lower(channel) = 'baidu' THEN '3'
        ELSE {channel_id}
    END AS channel_id
FROM bid
WHERE {channel_id} IS NOT NULL OR lower(channel) IN ('apple', 'google', 'facebook', 'baidu')"""
_Q14 = """SELECT auction, bidder, 0.908 * price AS price,
    CASE
        WHEN HOUR(`dateTime`) >= 8 AND HOUR(`dateTime`) <= 18 THEN 'dayTime'
        WHEN HOUR(`dateTime`) <= 6 OR HOUR(`dateTime`) >= 20 THEN 'nightTime'
        ELSE 'otherTime'
    END AS bidTimeType,
    `dateTime`, extra,
    CAST({length}(extra) - {length}(REPLACE(extra, 'c', '')) AS BIGINT) AS c_counts
FROM bid
WHERE 0.908 * price > 1000000 AND 0.908 * price < 50000000"""
_Q17 = """SELECT auction, DATE_FORMAT(`dateTime`, 'yyyy-MM-dd') AS `day`,
     count(*) AS total_bids,{ranks},
     min(price) AS min_price, max(price) AS max_price, {avg} AS avg_price,
     sum(price) AS sum_price
FROM bid
GROUP BY auction, DATE_FORMAT(`dateTime`, 'yyyy-MM-dd')"""

_HOP = "HOP(TABLE bid, DESCRIPTOR(`dateTime`), INTERVAL '2' SECOND, INTERVAL '10' SECOND)"
_Q5 = f"""SELECT AuctionBids.auction, AuctionBids.num
FROM (
    SELECT auction, count(*) AS num, window_start AS starttime, window_end AS endtime
    FROM TABLE({_HOP})
    GROUP BY auction, window_start, window_end
) AS AuctionBids
JOIN (
    SELECT max(CountBids.num) AS maxn, CountBids.starttime, CountBids.endtime
    FROM (
        SELECT count(*) AS num, window_start AS starttime, window_end AS endtime
        FROM TABLE({_HOP})
        GROUP BY auction, window_start, window_end
    ) AS CountBids
    GROUP BY CountBids.starttime, CountBids.endtime
) AS MaxBids
ON AuctionBids.starttime = MaxBids.starttime AND AuctionBids.endtime = MaxBids.endtime
   AND AuctionBids.num >= MaxBids.maxn"""
_Q7 = """SELECT B.auction, B.price, B.bidder, B.`dateTime`, B.extra
FROM bid B
JOIN (
    SELECT MAX(price) AS maxprice, window_end AS `dateTime`
    FROM TABLE(TUMBLE(TABLE bid, DESCRIPTOR(`dateTime`), INTERVAL '10' SECOND))
    GROUP BY window_start, window_end
) B1
ON B.price = B1.maxprice
WHERE B.`dateTime` BETWEEN B1.`dateTime` - INTERVAL '10' SECOND AND B1.`dateTime`"""
_Q8 = """SELECT P.id, P.name, P.starttime
FROM (
    SELECT id, name, window_start AS starttime, window_end AS endtime
    FROM TABLE(TUMBLE(TABLE person, DESCRIPTOR(`dateTime`), INTERVAL '10' SECOND))
    GROUP BY id, name, window_start, window_end
) P
JOIN (
    SELECT seller, window_start AS starttime, window_end AS endtime
    FROM TABLE(TUMBLE(TABLE auction, DESCRIPTOR(`dateTime`), INTERVAL '10' SECOND))
    GROUP BY seller, window_start, window_end
) A
ON P.id = A.seller AND P.starttime = A.starttime AND P.endtime = A.endtime"""
_Q11 = """SELECT B.bidder, count(*) AS bid_count,
    SESSION_START(B.`dateTime`, INTERVAL '10' SECOND) AS starttime,
    SESSION_END(B.`dateTime`, INTERVAL '10' SECOND) AS endtime
FROM bid B
GROUP BY B.bidder, SESSION(B.`dateTime`, INTERVAL '10' SECOND)"""
_Q13 = """SELECT B.auction, B.bidder, B.price, B.`dateTime`, S.`value`
FROM bid B
JOIN side_input S
ON MOD(B.auction, 10000) = S.key"""
_Q23 = """SELECT bidder, price, channel, url, B.extra AS bid_extra,
    P.id AS person_id, name, emailAddress, creditCard, city, state, P.extra AS person_extra,
    itemName, description, initialBid, reserve, A.`dateTime` AS auction_dateTime, expires,
    seller, category, A.extra AS auction_extra
FROM bid B
JOIN person P ON P.id = B.bidder
JOIN auction A ON A.seller = B.bidder"""
_SPARK_Q11 = """SELECT bidder, count(*) AS bid_count, session_window.start AS starttime,
    session_window.end AS endtime
FROM bid
GROUP BY bidder, session_window(`dateTime`, '10 seconds')"""
_SPARK_OPEN_WINDOWS = (
    "Spark: runs as a stream (append mode, windows joined with watermarks) but emits no row: "
    "Spark emits a window once the watermark passes its end, and its watermark stops at the "
    "last event's time minus the 4 s delay (a bounded input gets no final watermark, as "
    "Flink's does), so the input's windows never close; a join takes no complete mode")

QUERIES = (
    Query("q0", "pass-through", "SELECT auction, bidder, price, `dateTime`, extra FROM bid",
          "auction BIGINT, bidder BIGINT, price BIGINT, `dateTime` TIMESTAMP(3), extra STRING",
          ("bid",), spark_sql="same"),
    Query("q1", "currency conversion",
          "SELECT auction, bidder, 0.908 * price AS price, `dateTime`, extra FROM bid",
          "auction BIGINT, bidder BIGINT, price DECIMAL(23, 3), `dateTime` TIMESTAMP(3), "
          "extra STRING", ("bid",), spark_sql="same"),
    Query("q2", "selection", "SELECT auction, price FROM bid WHERE MOD(auction, 123) = 0",
          "auction BIGINT, price BIGINT", ("bid",), spark_sql="same"),
    Query("q3", "local item suggestion (join)",
          "SELECT P.name, P.city, P.state, A.id FROM auction AS A INNER JOIN person AS P "
          "ON A.seller = P.id "
          "WHERE A.category = 10 AND (P.state = 'OR' OR P.state = 'ID' OR P.state = 'CA')",
          "name STRING, city STRING, state STRING, id BIGINT", ("auction", "person"),
          spark_sql="same"),
    Query("q4", "average price for a category (join, aggregate of an aggregate)",
          """SELECT Q.category, AVG(Q.final) AS avg_final
FROM (
    SELECT MAX(B.price) AS final, A.category
    FROM auction A, bid B
    WHERE A.id = B.auction AND B.`dateTime` BETWEEN A.`dateTime` AND A.expires
    GROUP BY A.id, A.category
) Q
GROUP BY Q.category""", "category BIGINT, avg_final BIGINT", ("auction", "bid"), key=(0,),
          spark_gap="Spark: multiple streaming aggregations are not supported"),
    Query("q5", "hot items (HOP windows, their maximum joined back)", _Q5,
          "auction BIGINT, num BIGINT", ("bid",), event_time=True, spark_gap=_SPARK_OPEN_WINDOWS),
    Query("q7", "highest bid (TUMBLE window maximum joined with the bids)", _Q7,
          "auction BIGINT, price BIGINT, bidder BIGINT, `dateTime` TIMESTAMP(3), extra STRING",
          ("bid",), event_time=True, spark_gap=_SPARK_OPEN_WINDOWS),
    Query("q8", "monitor new users (TUMBLE windows, window join)", _Q8,
          "id BIGINT, name STRING, stime TIMESTAMP(3)", ("person", "auction"),
          event_time=True, spark_gap=_SPARK_OPEN_WINDOWS),
    Query("q9", "winning bids (join, Top-1)", """SELECT id, itemName, description, initialBid,
    reserve, `dateTime`, expires, seller, category, extra, auction, bidder, price,
    bid_dateTime, bid_extra
FROM (
   SELECT A.*, B.auction, B.bidder, B.price, B.`dateTime` AS bid_dateTime,
     B.extra AS bid_extra,
     ROW_NUMBER() OVER (PARTITION BY A.id ORDER BY B.price DESC, B.`dateTime` ASC) AS rownum
   FROM auction A, bid B
   WHERE A.id = B.auction AND B.`dateTime` BETWEEN A.`dateTime` AND A.expires
)
WHERE rownum <= 1""", AUCTION_COLUMNS + ", auction BIGINT, bidder BIGINT, price BIGINT, "
          "bid_dateTime TIMESTAMP(3), bid_extra STRING", ("auction", "bid"),
          spark_gap=_NO_ROW_NUMBER, key=(0,)),
    Query("q10", "log to file system (here: a blackhole; partition-commit policies are "
          "not in flintlock)",
          "SELECT auction, bidder, price, `dateTime`, extra, "
          "DATE_FORMAT(`dateTime`, 'yyyy-MM-dd') AS dt, DATE_FORMAT(`dateTime`, 'HH:mm') AS hm "
          "FROM bid",
          "auction BIGINT, bidder BIGINT, price BIGINT, `dateTime` TIMESTAMP(3), "
          "extra STRING, dt STRING, hm STRING", ("bid",), spark_sql="same"),
    Query("q11", "user sessions (SESSION windows)", _Q11,
          "bidder BIGINT, bid_count BIGINT, starttime TIMESTAMP(3), endtime TIMESTAMP(3)",
          ("bid",), event_time=True, spark_sql=_SPARK_Q11, spark_mode="complete"),
    Query("q13", "bounded side input join (a regular join: see NOT_RUN)", _Q13,
          "auction BIGINT, bidder BIGINT, price BIGINT, `dateTime` TIMESTAMP(3), "
          "`value` STRING", ("bid", "side_input"), spark_sql="same"),
    Query("q14", "calculation (count_char as a built-in expression)",
          _Q14.format(length="CHAR_LENGTH"),
          "auction BIGINT, bidder BIGINT, price DECIMAL(23, 3), bidTimeType STRING, "
          "`dateTime` TIMESTAMP(3), extra STRING, c_counts BIGINT", ("bid",),
          spark_sql=_Q14.format(length="char_length")),
    Query("q15", "bidding statistics per day (COUNT DISTINCT with FILTER)",
          f"SELECT DATE_FORMAT(`dateTime`, 'yyyy-MM-dd') AS `day`, count(*) AS total_bids,"
          f"{_RANKS},{_DISTINCT_RANKS}\nFROM bid GROUP BY DATE_FORMAT(`dateTime`, 'yyyy-MM-dd')",
          "`day` STRING, " + _DISTINCT_SINK, ("bid",), spark_gap=_NO_DISTINCT, key=(0,)),
    Query("q16", "channel statistics per day",
          "SELECT channel, DATE_FORMAT(`dateTime`, 'yyyy-MM-dd') AS `day`, "
          "max(DATE_FORMAT(`dateTime`, 'HH:mm')) AS `minute`, count(*) AS total_bids,"
          f"{_RANKS},{_DISTINCT_RANKS}\nFROM bid "
          "GROUP BY channel, DATE_FORMAT(`dateTime`, 'yyyy-MM-dd')",
          "channel STRING, `day` STRING, `minute` STRING, " + _DISTINCT_SINK, ("bid",),
          spark_gap=_NO_DISTINCT, key=(0, 1)),
    Query("q17", "auction statistics per day", _Q17.format(ranks=_RANKS, avg="avg(price)"),
          "auction BIGINT, `day` STRING, total_bids BIGINT, rank1_bids BIGINT, "
          "rank2_bids BIGINT, rank3_bids BIGINT, min_price BIGINT, max_price BIGINT, "
          "avg_price BIGINT, sum_price BIGINT", ("bid",),
          spark_sql=_Q17.format(ranks=_RANKS, avg="CAST(avg(price) AS BIGINT)"),
          spark_mode="complete", key=(0, 1)),
    Query("q18", "last bid per bidder and auction (Top-1 by time)",
          "SELECT auction, bidder, price, channel, url, `dateTime`, extra FROM "
          "(SELECT *, ROW_NUMBER() OVER (PARTITION BY bidder, auction "
          "ORDER BY `dateTime` DESC) AS rank_number FROM bid) WHERE rank_number <= 1",
          BID_COLUMNS, ("bid",), spark_gap=_NO_ROW_NUMBER, result="keys", key=(0, 1)),
    Query("q19", "auction Top-10 prices",
          "SELECT * FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY auction "
          "ORDER BY price DESC) AS rank_number FROM bid) WHERE rank_number <= 10",
          BID_COLUMNS + ", rank_number BIGINT", ("bid",), spark_gap=_NO_ROW_NUMBER,
          result="keys", key=(0, 7)),
    Query("q20", "expand bids with their auction (join, filter)",
          "SELECT auction, bidder, price, channel, url, B.`dateTime` AS bid_dateTime, "
          "B.extra AS bid_extra, itemName, description, initialBid, reserve, "
          "A.`dateTime` AS auction_dateTime, expires, seller, category, A.extra AS auction_extra "
          "FROM bid AS B INNER JOIN auction AS A ON B.auction = A.id WHERE A.category = 10",
          "auction BIGINT, bidder BIGINT, price BIGINT, channel STRING, url STRING, "
          "bid_dateTime TIMESTAMP(3), bid_extra STRING, itemName STRING, description STRING, "
          "initialBid BIGINT, reserve BIGINT, auction_dateTime TIMESTAMP(3), "
          "expires TIMESTAMP(3), seller BIGINT, category BIGINT, auction_extra STRING",
          ("auction", "bid"), spark_sql="same"),
    Query("q21", "add channel id (REGEXP_EXTRACT, CASE)", _Q21.format(channel_id=_CHANNEL_ID),
          "auction BIGINT, bidder BIGINT, price BIGINT, channel STRING, channel_id STRING",
          ("bid",), spark_sql=_Q21.format(channel_id=_SPARK_CHANNEL_ID)),
    Query("q22", "URL directories (SPLIT_INDEX)",
          "SELECT auction, bidder, price, channel, SPLIT_INDEX(url, '/', 3) AS dir1, "
          "SPLIT_INDEX(url, '/', 4) AS dir2, SPLIT_INDEX(url, '/', 5) AS dir3 FROM bid",
          "auction BIGINT, bidder BIGINT, price BIGINT, channel STRING, dir1 STRING, "
          "dir2 STRING, dir3 STRING", ("bid",),
          spark_sql="SELECT auction, bidder, price, channel, element_at(split(url, '/'), 4) "
          "AS dir1, element_at(split(url, '/'), 5) AS dir2, element_at(split(url, '/'), 6) "
          "AS dir3 FROM bid"),
    Query("q23", "bids of people who also sell (three-way join)", _Q23,
          "bidder BIGINT, price BIGINT, channel STRING, url STRING, bid_extra STRING, "
          "person_id BIGINT, name STRING, emailAddress STRING, creditCard STRING, city STRING, "
          "state STRING, person_extra STRING, itemName STRING, description STRING, "
          "initialBid BIGINT, reserve BIGINT, auction_dateTime TIMESTAMP(3), "
          "expires TIMESTAMP(3), seller BIGINT, category BIGINT, auction_extra STRING",
          ("bid", "person", "auction"), spark_sql="same"),
)

NOT_RUN = {
    "q6": "average selling price by seller: an OVER window consuming the retractions of a "
          "Top-1; Flink's suite marks it unsupported (Flink's OVER aggregation takes no "
          "updates), so PyFlink gives no reference",
    "q12": "processing-time windows (PROCTIME()): which window a bid falls in depends on the "
           "wall clock, so no two runs (or engines) agree row for row",
}
"""Queries of the suite not in ``QUERIES``, and why. q13 is in, changed: the suite joins
``FOR SYSTEM_TIME AS OF`` a processing time against its side table, a lookup join, which
PyFlink 2.3.0's filesystem connector cannot serve (it is no lookup source; the suite used the
legacy filesystem table, gone from Flink 2); here it is the regular join against the bounded
side table, which gives the same rows when the side table does not change."""


def table_columns(query: Query) -> dict[str, str]:
    """Each table the query reads: its columns, with the watermark for event-time queries."""
    return {table: TABLE_COLUMNS[table] + (WATERMARK if query.event_time and table != "side_input"
                                           else "") for table in query.tables}


def write_side_input(directory: Path) -> None:
    """``directory/side_input``: the suite's bounded side table for q13, keys 0..9999 and a
    value each, written once next to the events (every engine reads the same file)."""
    out = directory / "side_input"
    if (out / "part-0.csv").exists():
        return
    out.mkdir(parents=True, exist_ok=True)
    lines = "".join(f"{key},side-{key * 7 % SIDE_INPUT_KEYS}\n" for key in range(SIDE_INPUT_KEYS))
    (out / "part-0.csv").write_text(lines)


BY_NAME = {query.name: query for query in QUERIES}


def spark_sql(query: Query) -> str | None:
    return query.sql if query.spark_sql == "same" else query.spark_sql


__all__ = ["BY_NAME", "NOT_RUN", "QUERIES", "TABLE_COLUMNS", "Query", "spark_sql", "table_columns",
           "write_side_input"]
