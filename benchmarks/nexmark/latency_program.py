"""End-to-end latency of a Nexmark query at a fixed event rate, as a PyFlink user measures it
(issue 33, item 3). Written against PyFlink 2.3.0's API; ``run.py`` runs it on PyFlink and, with
the imports changed to ``flintlock``, on flintlock (standard library only besides that).

    python latency_program.py SPEC.json RESULT.json

How: the query reads filesystem tables monitored for new files (``source.monitor-interval``).
A feeder thread of this process appends the generated events (``data``: the files of
``generate.py``) at ``rate`` events/s: every ``tick`` seconds it writes the events due so far
into a new file per event type (written under a hidden name, then renamed: both engines skip
hidden files), each event's ``dateTime`` replaced by the wall-clock time of the write, in
milliseconds (UTC). The query ``sql`` ends in a projection of its result with
``LOCALTIMESTAMP`` added as the last column (evaluated per row in streaming mode by both
engines, in the query's last operator), over a sample of the rows. An event's latency is that
column minus the event's ``dateTime`` (column ``time_column``): the time from its line being
written to its result row being made at the end of the query. It holds the engine's file
discovery (up to the monitor interval), reading, decoding and the query's operators; not the
hand-over of the row to this process (``collect()``: PyFlink's client fetches rows through
py4j at a few hundred rows a second, which would measure the client instead of the engine).
Counted are the rows of the events written from ``warmup`` seconds after the feeder started
(the events fed while the job was starting are a backlog it works off first) for
``seconds`` (by each row's ``dateTime``, its write time), so both engines measure the rows of
the same events; rows are read until ``grace`` seconds (default 5) after that stretch.
(Anchoring the window on each engine's first result row instead made the engines count
different stretches of the stream: q2t's ``MOD(auction, 123) = 0`` is met in bursts, when the
hot auction — half the bids name the latest multiple of 100 — is also a multiple of 123,
about 190 sampled rows every 5 s at 40,000 events/s, so a window shifted by a few seconds
held one burst more or less: the 12 % row-count difference of the 07:32 run.)

SPEC: ``{"query", "sql", "tables": {name: columns}, "data", "work", "rate", "seconds",
"warmup", "tick", "monitor", "time_column", "shares": {table: fraction of the events},
"stamp_columns": {table: position of its dateTime},
"parallelism"}``. RESULT: ``{"query", "rate", "rows", "p50_ms", "p90_ms", "p99_ms", "max_ms",
"fed"}`` or ``{"error"}``.
"""

import datetime
import heapq
import json
import os
import sys
import threading
import time


def around(line, column):
    """The line's text before and after its ``column``-th field (its ``dateTime``)."""
    parts = line.split(",")
    return ",".join(parts[:column]) + ",", "," + ",".join(parts[column + 1:]) + "\n"


class Feeder(threading.Thread):
    """Writes the events due at ``rate`` into new files, one per table per tick."""

    def __init__(self, spec, tables):
        super().__init__(daemon=True)
        self.spec, self.tables = spec, tables
        self.lines = {t: [around(line, spec["stamp_columns"][t]) for line in in_event_order(
            os.path.join(spec["data"], t), spec["stamp_columns"][t])] for t in tables}
        self.written = dict.fromkeys(tables, 0)
        self.stop = threading.Event()
        self.start_time = None

    def run(self):
        tick, rate, shares = self.spec["tick"], self.spec["rate"], self.spec["shares"]
        if self.start_time is None:
            self.start_time = time.time()
        number = 0
        while not self.stop.is_set():
            now = time.time()
            now_text = datetime.datetime.utcfromtimestamp(now).strftime(
                "%Y-%m-%d %H:%M:%S.%f")[:-3]
            for table in self.tables:
                due = int(rate * shares[table] * (now - self.start_time)) - self.written[table]
                lines = self.lines[table][self.written[table]:self.written[table] + due]
                if not lines:
                    continue
                directory = os.path.join(self.spec["work"], table)
                hidden = os.path.join(directory, f".part-{number}.csv")
                with open(hidden, "w") as out:
                    out.write("".join(f"{head}{now_text}{tail}" for head, tail in lines))
                os.rename(hidden, os.path.join(directory, f"part-{number}.csv"))
                self.written[table] += len(lines)
            number += 1
            self.stop.wait(max(0.0, tick - (time.time() - now)))


def in_event_order(directory, column):
    """The events of a type in the order of their generated ``dateTime`` (``generate.py``'s
    files are each in that order; a bid may name an auction generated a few ms after it)."""
    files = [open(os.path.join(directory, name)).read().splitlines()
             for name in sorted(os.listdir(directory)) if name.endswith(".csv")]
    return list(heapq.merge(*files, key=lambda line: line.split(",")[column]))


def utc_naive(seconds):
    """Epoch seconds as the naive UTC datetime the feeder writes (to the millisecond)."""
    moment = datetime.datetime.fromtimestamp(seconds, datetime.UTC).replace(tzinfo=None)
    return moment.replace(microsecond=moment.microsecond // 1000 * 1000)


def percentile(ordered, fraction):
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def measure(spec):
    from pyflink.table import EnvironmentSettings, TableEnvironment

    t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    t_env.get_config().set("parallelism.default", str(spec.get("parallelism", 2)))
    t_env.get_config().set("table.local-time-zone", "UTC")
    for table, columns in spec["tables"].items():
        os.makedirs(os.path.join(spec["work"], table), exist_ok=True)
        t_env.execute_sql(
            f"CREATE TABLE {table} ({columns}) WITH ('connector' = 'filesystem', "
            f"'path' = '{spec['work']}/{table}', 'format' = 'csv', "
            f"'source.monitor-interval' = '{spec['monitor']}')")
    feeder = Feeder(spec, list(spec["tables"]))
    result = t_env.execute_sql(spec["sql"])
    feeder.start_time = time.time()
    feeder.start()
    begin = utc_naive(feeder.start_time + spec["warmup"])
    end = utc_naive(feeder.start_time + spec["warmup"] + spec["seconds"])
    last = feeder.start_time + spec["warmup"] + spec["seconds"] + spec.get("grace", 5.0)
    samples, column = [], spec["time_column"]
    with result.collect() as rows:
        for row in rows:
            if time.time() > last:
                break
            done, created = row[len(row) - 1], row[column]
            if not begin <= created < end:
                continue
            if done.tzinfo is not None:  # a TIMESTAMP_LTZ: to naive UTC
                done = done.astimezone(datetime.UTC).replace(tzinfo=None)
            samples.append((done - created).total_seconds() * 1000.0)
    feeder.stop.set()
    samples.sort()
    if not samples:
        return {"error": "no rows arrived after the warm-up"}
    return {"rows": len(samples), "p50_ms": percentile(samples, 0.5),
            "p90_ms": percentile(samples, 0.9), "p99_ms": percentile(samples, 0.99),
            "max_ms": samples[-1], "fed": sum(feeder.written.values())}


def main():
    spec = json.loads(open(sys.argv[1]).read())
    try:
        outcome = measure(spec)
    except Exception as error:  # reported, the runner goes on with the next query
        outcome = {"error": f"{type(error).__name__}: {str(error)[:2000]}"}
    outcome = {"query": spec["query"], "rate": spec["rate"], **outcome}
    print(spec["query"], outcome, flush=True)
    with open(sys.argv[2], "w") as out:
        json.dump(outcome, out)
    sys.stdout.flush()
    os._exit(0)  # the job was cancelled with the iterator; do not wait for engine threads


if __name__ == "__main__":
    main()
