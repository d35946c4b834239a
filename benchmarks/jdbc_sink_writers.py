"""The JDBC sink writers against the tests' PostgreSQL (tests/unit/connectors/postgres_server.py):
100,000 rows of (BIGINT, TEXT) given to ``write()`` 1,000 at a time, a checkpoint (snapshot and
commit) every 20,000 rows, batches of 5,000; the at-least-once writer with one execution per
row (``executemany``) and with multi-row INSERTs, and the exactly-once (two-phase) writer with
multi-row INSERTs; 3 interleaved rounds, medians. Not part of ``make bench`` (it needs the
test extra). Run under the Spark lock on a shared machine:

    flock /tmp/flintlock-spark.lock .venv/bin/python -m benchmarks.jdbc_sink_writers
"""

from __future__ import annotations

import statistics
import time

from flintlock.common.types import Row
from flintlock.datastream.connectors._jdbc import ConnectionSpec
from flintlock.datastream.connectors._jdbc_sink import (
    BatchWriter,
    ExecutionSettings,
    SimpleStatements,
    TwoPhaseWriter,
)
from tests.unit.connectors.postgres_server import postgres_server

ROWS = 100_000
SQL = "INSERT INTO t (id, name) VALUES (?, ?)"
VARIANTS = ("at-least-once executemany", "at-least-once multi-row", "exactly-once multi-row")


def _one_run(spec: ConnectionSpec, variant: str, rows: list[Row]) -> float:
    statements = SimpleStatements(SQL)
    if "executemany" in variant:
        statements._statement._chunk = 0  # one execution per row
    settings = ExecutionSettings(batch_size=5000)
    writer: BatchWriter | TwoPhaseWriter = (
        TwoPhaseWriter(spec, statements, "bench", 0, settings) if "exactly" in variant
        else BatchWriter(spec, statements, settings))
    writer.restore([])
    started = time.perf_counter()
    for checkpoint, start in enumerate(range(0, ROWS, 1000)):
        writer.write(rows[start:start + 1000])
        if (start + 1000) % 20_000 == 0:
            writer.snapshot_state(checkpoint)
            writer.commit(checkpoint)
    writer.end_input()
    elapsed = time.perf_counter() - started
    writer.close()
    return ROWS / elapsed


def main() -> None:
    rows = [Row(i, f"name-{i}") for i in range(ROWS)]
    with postgres_server() as server:
        with server.connect() as connection:
            connection.execute("CREATE TABLE t (id BIGINT, name TEXT)")
        spec = ConnectionSpec(server.jdbc_url, "postgres")
        results: dict[str, list[float]] = {variant: [] for variant in VARIANTS}
        for _ in range(3):
            for variant in VARIANTS:
                with server.connect() as connection:
                    connection.execute("TRUNCATE t")
                results[variant].append(_one_run(spec, variant, rows))
                with server.connect() as connection:
                    row = connection.execute("SELECT count(*) FROM t").fetchone()
                    assert row is not None and row[0] == ROWS
    for variant, rates in results.items():
        print(f"{variant}: median {statistics.median(rates) / 1000:.0f} k rows/s "
              f"(rounds: {', '.join(f'{r / 1000:.0f}' for r in rates)})")


if __name__ == "__main__":
    main()
