"""Issue 32's interval join operator alone: CPU cost per input row.

What: the ``interval`` query of ``benchmarks.table_sql_windows`` (``a JOIN b ON a.k = b.k AND
a.ts BETWEEN b.ts - INTERVAL '1' SECOND AND b.ts``, ``k = id % 1000``, ``ts = id / 100`` s) as
the planner builds its join: ``IntervalJoinFunction`` with ``RowtimeOf`` rowtimes, run by the
operator ``operator_factory`` picks for it, on a heap backend. Both inputs get the same rows in
timestamped batches of ``BATCH``, alternately, each pair followed by the watermark the sources
would give (``ts - 1 s``), then the final watermark; every row joins once. The sources, the
exchange and the sink are not in it (``benchmarks.table_sql_windows`` runs the whole job).

How: CPU time (``time.process_time``) of a fresh operator per repeat, median (min) of
``--repeat``, ns per input row (both sides counted); the machine may be shared, so compare two
trees in interleaved runs rather than reading the figure alone.

    .venv/bin/python -m benchmarks.table_sql_interval_stage [--rows 20000] [--repeat 3]

``--callgrind``: instructions per input row instead, which the load of a shared machine does
not move: this script under ``valgrind --tool=callgrind`` twice — building the input and
running the operator once (after a 2,000-row warm-up), and the same without the measured
run — the difference over the input rows (an A/B: run it in each tree; ``--rows 4000`` takes
about a minute a run).
"""

from __future__ import annotations

import argparse
import datetime
import gc
import re
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Any

from flintlock.common.operator_spec import OperatorKind, OperatorSpec
from flintlock.datastream.changelog.interval_join import IntervalJoinFunction
from flintlock.datastream.changelog.join import JoinType
from flintlock.datastream.changelog.rows import INSERT, new_row
from flintlock.runtime.network.event_time import TimestampedBatch
from flintlock.runtime.state.heap import HeapKeyedStateBackend
from flintlock.runtime.state.keygroups import KeyGroupRange
from flintlock.table.planner.windows import RowtimeOf
from flintlock.testing.operators import open_operator

BATCH = 1_000
_EPOCH = datetime.datetime(1970, 1, 1)
_START = datetime.datetime(2024, 1, 1)


class Count:
    """An output that counts rows and drops them."""

    def __init__(self) -> None:
        self.rows = 0

    def collect_batch(self, records: list[Any]) -> None:
        self.rows += len(records)

    def emit_watermark(self, timestamp: int) -> None:
        pass

    def emit_watermark_status(self, idle: bool) -> None:
        pass


def batches(rows: int, size: int = BATCH) -> list[tuple[TimestampedBatch, int]]:
    """The input: (batch of ``size`` rows, the watermark after it) for ids 1..rows."""
    out = []
    for start in range(1, rows + 1, size):
        values = [new_row([i, i % 1000, _START + datetime.timedelta(seconds=i // 100)], INSERT)
                  for i in range(start, min(rows, start + size - 1) + 1)]
        stamps = [(v._values[2] - _EPOCH) // datetime.timedelta(milliseconds=1) for v in values]
        out.append((TimestampedBatch(values, stamps), max(stamps) - 1000))
    return out


def run(data: list[tuple[TimestampedBatch, int]]) -> float:
    """CPU seconds of one operator over ``data``."""
    join = IntervalJoinFunction(JoinType.INNER, 3, 3, (1,), (1,), -1000, 0, RowtimeOf(2),
                                RowtimeOf(2))
    output = Count()
    operator, _ = open_operator(
        OperatorSpec(OperatorKind.KEYED_CO_PROCESS, function=join, keyed=True),
        keyed_backend=HeapKeyedStateBackend(KeyGroupRange(0, 127), 128), output=output,
        key_selectors=(join.left_key_selector(), join.right_key_selector()))
    start = time.process_time()
    for batch, watermark in data:
        operator.process_batch(batch)
        operator.process_batch2(batch)
        operator.process_watermark(watermark)
    operator.process_watermark(2**63 - 1)
    spent = time.process_time() - start
    if output.rows != sum(len(batch) for batch, _ in data):
        raise SystemExit(f"{output.rows} joined rows, expected one per id")
    return spent


def instructions(rows: int, batch: int, measured: bool) -> int:
    """Instructions callgrind counts for this script's ``--under-callgrind`` run."""
    with tempfile.TemporaryDirectory(prefix="interval-stage-") as directory:
        result = subprocess.run(
            ["valgrind", "--tool=callgrind", f"--callgrind-out-file={directory}/out",
             sys.executable, "-m", "benchmarks.table_sql_interval_stage", "--rows", str(rows),
             "--batch", str(batch), "--under-callgrind", "run" if measured else "build"],
            capture_output=True, text=True, check=True)
    found = re.search(r"Collected : (\d+)", result.stderr)
    if found is None:
        raise SystemExit(f"no instruction count from callgrind: {result.stderr[-500:]}")
    return int(found.group(1))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=20_000, help="rows of each input")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--batch", type=int, default=BATCH,
                        help="rows a batch (the real job's join sees ~100, a watermark per "
                             "pair of batches)")
    parser.add_argument("--callgrind", action="store_true",
                        help="instructions per input row (valgrind) instead of CPU time")
    parser.add_argument("--under-callgrind", choices=("build", "run"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.callgrind:
        spent = (instructions(args.rows, args.batch, True)
                 - instructions(args.rows, args.batch, False))
        print(f"interval join operator: {spent // (2 * args.rows):,} instructions per input row")
        return 0
    data = batches(args.rows, args.batch)
    if args.under_callgrind:
        run(batches(2_000))  # warm-up: first calls, caches
        gc.freeze()
        if args.under_callgrind == "run":
            run(data)
        return 0
    gc.freeze()  # the input lives through every repeat
    costs = [run(data) / (2 * args.rows) * 1e9 for _ in range(args.repeat)]
    print(f"interval join operator: {statistics.median(costs):,.0f} ({min(costs):,.0f}) "
          "ns per input row")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
