"""Issue 28's SQL job, stage by stage, in instructions per row (callgrind): a measure the load
of a shared machine does not move.

What: the stages of ``benchmarks.table_sql``'s pure-SQL job on one thread, each over
``--batches`` batches of 1,000 rows, each batch's output freed: the fused source Calc
(``MOD(id, 100) AS k, id`` compiled as the planner compiles it), encode
(``ChangelogRowSerializer``), decode (``ColumnDecodingSerializer``, as the aggregation's
input is read: a ``ColumnBatch``, no rows; ``RunDetectingSerializer``, rows, in a tree without
it), the group aggregation's batch step (``COUNT(*)``, ``SUM(id)`` through
``agg_kernel.native_batch``: the C kernel where built) and the four in a row. The cycle
collector runs with a TaskManager's settings (what exists frozen, young collections every
50,000 net allocations). One batch is live at a time,
so the collector's walks over the batches in flight of a real job do not show here: for
those, ``benchmarks.table_sql_stages --end-to-end``.

How: ``--callgrind`` runs this script under ``valgrind --tool=callgrind`` with a dump before
every call of ``_crows.new_row`` (called once between stages as a marker, nowhere inside them)
and prints each stage's instructions divided by its rows. Instruction counts are the same run
after run whatever else the machine does; they are not time (cache misses and allocation
patterns are not in them), so read them next to the timed stages. An A/B: run it in each tree
(``PYTHONPATH=<tree>``, the tree's ``_crows`` built there).

    .venv/bin/python -m benchmarks.table_sql_instructions --callgrind [--batches 100]
"""

from __future__ import annotations

import argparse
import gc
import re
import subprocess
import sys
import tempfile
from pathlib import Path

STAGES = ("source", "encode", "decode", "aggregation", "the four in a row")
ROWS = 1000


def run_stages(batches: int) -> None:
    """The stages, a marker call before each and after the last."""
    from flintlock.common.row_batches import accelerator
    from flintlock.common.types import RowKind
    from flintlock.datastream.changelog import aggregates
    from flintlock.datastream.changelog.agg_codegen import StepSpec, compile_group_batch
    from flintlock.datastream.changelog.agg_kernel import native_batch
    from flintlock.datastream.changelog.group_agg import AggregateCall
    from flintlock.runtime.network import changelog_serializer, event_time
    from flintlock.runtime.network.changelog_serializer import ChangelogRowSerializer
    from flintlock.table import types as t
    from flintlock.table.codegen.compiler import compile_column_calc
    from flintlock.table.plan.rex import Call, InputRef, Literal

    if accelerator is None:
        raise SystemExit("the C accelerator is not built: no marker to dump at")
    big = t.BigIntType()
    key = Call(t.IntType(), "MOD", (InputRef(big, 0), Literal(t.IntType(False), 100)))
    calc = compile_column_calc([key, InputRef(big, 0)], None)
    columns = [list(range(10**6, 10**6 + ROWS))]
    rows = calc(columns, ROWS, RowKind.INSERT)
    # the aggregation's input as columns (issue 28); an older tree decodes rows
    reader = getattr(changelog_serializer, "ColumnDecodingSerializer",
                     event_time.RunDetectingSerializer)
    encoder, decoder = ChangelogRowSerializer(), reader()
    data = bytes(encoder.dumps(rows))
    spec = StepSpec((0,), (AggregateCall(aggregates.Count1()),
                           AggregateCall(aggregates.Sum(64), (1,))), False, True, True)
    step = native_batch(spec, compile_group_batch(spec)) or compile_group_batch(spec)
    table: dict[object, object] = {}
    batch = decoder.loads(data)
    step(batch, table, None, None)  # every key seen: the steady state (+U a row)
    gc.freeze()
    gc.set_threshold(50_000, 10, 10)  # a TaskManager's collector (spark/collector.py)

    def mark() -> None:
        accelerator.new_row([], RowKind.INSERT)

    work = (lambda: calc(columns, ROWS, RowKind.INSERT), lambda: encoder.dumps(rows),
            lambda: decoder.loads(data), lambda: step(batch, table, None, None),
            lambda: step(decoder.loads(encoder.dumps(calc(columns, ROWS, RowKind.INSERT))),
                         table, None, None))
    for one in work:
        mark()
        for _ in range(batches):
            one()
    mark()


def under_callgrind(batches: int) -> list[tuple[str, float]]:
    """(stage, instructions per row) from a callgrind run of this script."""
    with tempfile.TemporaryDirectory(prefix="table-sql-ir-") as directory:
        out = Path(directory) / "callgrind.out"
        subprocess.run(["valgrind", "--tool=callgrind", "--dump-before=new_row",
                        f"--callgrind-out-file={out}", sys.executable, "-m",
                        "benchmarks.table_sql_instructions", "--batches", str(batches)],
                       check=True, capture_output=True)
        totals = []
        for part in range(2, 2 + len(STAGES)):  # part 1: start-up to the first marker
            text = (out.parent / f"{out.name}.{part}").read_text()
            found = re.search(r"^(?:summary|totals): (\d+)", text, re.MULTILINE)
            if found is None:
                raise SystemExit(f"no instruction total in callgrind's dump {part}")
            totals.append(int(found.group(1)) / (batches * ROWS))
    return list(zip(STAGES, totals, strict=True))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batches", type=int, default=100)
    parser.add_argument("--callgrind", action="store_true",
                        help="run under callgrind and print instructions per row")
    args = parser.parse_args()
    if not args.callgrind:
        run_stages(args.batches)
        return
    print("| stage | instructions per row |\n|---|---:|")
    for stage, per_row in under_callgrind(args.batches):
        print(f"| {stage} | {per_row:,.0f} |")


if __name__ == "__main__":
    main()
