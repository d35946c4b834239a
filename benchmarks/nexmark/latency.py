"""End-to-end latency percentiles of Nexmark queries at a fixed event rate, flintlock and
PyFlink 2.3.0 at the same rate, interleaved (issue 33, item 3).

    flock /tmp/flintlock-spark.lock .venv/bin/python -m benchmarks.nexmark.latency
        --rate 10000 [--seconds 40] [--warmup 10] [--rounds 2] [--queries q1 q2 q20]
        [--engines flintlock pyflink] [--pyflink-python PATH] [--json FILE]

Each round runs, per engine in turn (order rotating by round), every query in a fresh process
of ``latency_program.py`` (see there for what a latency is: the time from an event's line being
written into a monitored directory to its result row being made at the end of the query,
``LOCALTIMESTAMP`` in the query's last projection, the same on both engines). Events come
from ``generate.py``'s files of ``--events`` events; the rate counts every event (people,
auctions, bids), fed in their proportions. Reported: per query and engine the median over
rounds of p50 / p90 / p99 / max.
``q2`` has no time column in its result, so it is measured as ``q2t``: the same selection with
the bid's ``dateTime`` added to its SELECT.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

from benchmarks.nexmark.queries import BY_NAME, TABLE_COLUMNS
from benchmarks.nexmark.run import ROOT, Engines, dataset, ported, pyflink_python

HERE = Path(__file__).resolve().parent
SHARES = {"person": 0.02, "auction": 0.06, "bid": 0.92}
"""The Nexmark proportions of people, auctions and bids (1 : 3 : 46)."""
TIME_COLUMN = {"q0": 3, "q1": 3, "q2t": 2, "q20": 5}
"""Position of the bid's ``dateTime`` in each query's result."""
SAMPLE = {"q0": "MOD(bidder, 512) = 0", "q1": "MOD(bidder, 512) = 0",
          "q2t": "MOD(price, 4) = 0", "q20": "MOD(bidder, 32) = 0"}
"""Which result rows are measured: few enough that PyFlink's ``collect()`` client (about 150
rows a second through py4j) keeps up at 40,000 events/s, so it does not backpressure the job
(one in 16 of q1's rows did: 3,288 rows arrived where flintlock's 11,454 did; all of q2t's,
about 300 rows a second: 2,891 arrived in 20 s where flintlock's 6,173 did — the client's
ceiling, 150 a second for 20 s). q2t's result has no ``bidder``: it is sampled on ``price``
(about 75 rows a second). Both engines see the same events at the same rate, so a complete
run delivers about as many rows on each (``main`` flags a difference)."""
Q2T = "SELECT auction, price, `dateTime` FROM bid WHERE MOD(auction, 123) = 0"


def measured_sql(name: str) -> str:
    """The query's result with ``LOCALTIMESTAMP`` added last, over the sampled rows (every
    column kept, so neither engine prunes any of the query's work)."""
    sql = Q2T if name == "q2t" else BY_NAME[name].sql
    return f"SELECT q.*, LOCALTIMESTAMP AS done FROM ({sql}) AS q WHERE {SAMPLE[name]}"


class LatencyEngines(Engines):
    """``Engines`` running ``latency_program.py`` (flintlock's copy with its imports ported)."""

    def __init__(self, workdir: Path, pyflink: Path) -> None:
        super().__init__(workdir, pyflink)
        source = (HERE / "latency_program.py").read_text()
        (workdir / "pyflink" / "latency.py").write_text(source)
        (workdir / "flintlock" / "latency.py").write_text(ported(source))
        self.commands = {"flintlock": [sys.executable, str(workdir / "flintlock" / "latency.py")],
                         "pyflink": [str(pyflink), str(workdir / "pyflink" / "latency.py")]}

    def run_one(self, engine: str, spec: dict[str, Any]) -> dict[str, Any]:
        result: Any = self.run(engine, spec)
        return dict(result)


def spec_for(name: str, args: argparse.Namespace, data: Path, work: Path) -> dict[str, Any]:
    tables = ("bid",) if name == "q2t" else BY_NAME[name].tables
    return {"query": name, "sql": measured_sql(name),
            "tables": {t: TABLE_COLUMNS[t] for t in tables},
            "data": str(data), "work": str(work), "rate": args.rate, "seconds": args.seconds,
            "warmup": args.warmup, "tick": 0.1, "monitor": "100 ms",
            "time_column": TIME_COLUMN[name], "shares": SHARES, "parallelism": 2,
            "stamp_columns": {"person": 6, "auction": 5, "bid": 5}}


def summary(results: list[dict[str, Any]]) -> dict[str, Any]:
    good = [r for r in results if "error" not in r]
    if not good:
        return {"error": results[0].get("error") if results else "not run"}
    return {key: statistics.median(r[key] for r in good)
            for key in ("p50_ms", "p90_ms", "p99_ms", "max_ms", "rows")} | {"runs": results}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rate", type=int, required=True, help="events per second")
    parser.add_argument("--seconds", type=float, default=40.0)
    parser.add_argument("--warmup", type=float, default=10.0)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--queries", nargs="*", default=["q1", "q2t", "q20"],
                        choices=sorted(TIME_COLUMN))
    parser.add_argument("--engines", nargs="*", default=["flintlock", "pyflink"],
                        choices=["flintlock", "pyflink"])
    parser.add_argument("--pyflink-python")
    parser.add_argument("--data", type=Path, default=ROOT / ".bench" / "nexmark")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    data = dataset(args.data, args.events)
    found: dict[str, dict[str, list[dict[str, Any]]]] = {
        q: {e: [] for e in args.engines} for q in args.queries}
    with tempfile.TemporaryDirectory(prefix="nexmark-latency-") as workdir:
        engines = LatencyEngines(Path(workdir), pyflink_python(args.pyflink_python))
        for number in range(args.rounds):
            shift = number % len(args.engines)
            for engine in args.engines[shift:] + args.engines[:shift]:
                for query in args.queries:
                    work = Path(workdir) / f"feed-{engine}-{query}-{number}"
                    spec = spec_for(query, args, data, work)
                    found[query][engine].append(engines.run_one(engine, spec))
    report = {q: {e: summary(r) for e, r in by.items()} for q, by in found.items()}
    for query, by in report.items():
        counts = {e: s["rows"] for e, s in by.items() if "rows" in s}
        if counts and min(counts.values()) < 0.9 * max(counts.values()):
            print(f"{query}: rows delivered differ ({counts}): an engine did not keep up, or "
                  "its client throttled it; its percentiles are not comparable", flush=True)
        print(f"{query}: " + "; ".join(
            f"{e} " + (f"p50 {s['p50_ms']:.0f} ms, p99 {s['p99_ms']:.0f} ms" if "p99_ms" in s
                       else f"error {s['error']}") for e, s in by.items()), flush=True)
    if args.json:
        args.json.write_text(json.dumps({"rate": args.rate, "seconds": args.seconds,
                                         "warmup": args.warmup, "rounds": args.rounds,
                                         "latency": report}, indent=2, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
