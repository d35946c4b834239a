"""Event-time deduplication (``flintlock.datastream.changelog.dedup_rowtime``, issue 28):
keep-last replaces the stored row by any row not earlier in rowtime and emits -U/+U at once;
keep-first holds the earliest row per key until the watermark passes it and emits it once as
+I — exactly what PyFlink 2.3.0 recorded (``tests/table/oracle/changelog_dedup_rowtime.py``
-> ``tests/table/fixtures/changelog_dedup_rowtime.txt``) for the same input, and the edge
rules (late rows, ties, variants)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from flintlock.datastream.changelog.dedup_rowtime import (
    RowTimeKeepFirstRowFunction,
    RowTimeKeepLastRowFunction,
)
from flintlock.datastream.changelog.errors import NotInsertOnlyError
from flintlock.datastream.changelog.rows import key_selector
from tests.table.changelog_harness import Harness, r

FIXTURE = Path(__file__).parent / "fixtures" / "changelog_dedup_rowtime.txt"
EVENTS = [("a", 1, 1000), ("b", 2, 1000), ("a", 3, 3000), ("a", 4, 2000), ("a", 5, 3000),
          ("b", 6, 500), ("a", 7, 9000), ("b", 8, 9000)]
END_OF_INPUT = 2**63 - 1


def _ts(row) -> int:
    return row[2]


def _flink(case: str) -> list[str]:
    block = FIXTURE.read_text().split(f"=== CASE {case}\n", 1)[1].split("--- rows\n", 1)[1]
    return [f"{line[:2]}{ast.literal_eval(line[2:])}"
            for line in block.split("=== ", 1)[0].splitlines()]


def _run(function) -> Harness:
    return Harness(function, [key_selector((0,))])


def _listed(h: Harness) -> list[str]:
    return [f"{row.get_row_kind().short_string()}{list(row)}" for row in h.rows()]


@pytest.mark.parametrize(("case", "function"), [
    ("rowtime last", RowTimeKeepLastRowFunction(_ts)),
    ("rowtime first", RowTimeKeepFirstRowFunction(_ts))])
def test_flinks_sequence_for_the_recorded_input(case, function) -> None:
    h = _run(function)
    for event in EVENTS:  # the recorded job's watermark trails by 10 s: never past a row
        h.feed(r("+I", *event))
        h.watermark(max(e[2] for e in EVENTS[:EVENTS.index(event) + 1]) - 10_000)
    h.watermark(END_OF_INPUT)
    assert _listed(h) == _flink(case)


def test_keep_first_drops_late_rows_and_emits_once() -> None:
    h = _run(RowTimeKeepFirstRowFunction(_ts))
    assert h.feed(r("+I", "a", 1, 100), r("+I", "a", 2, 100)) == []
    assert h.watermark(99) == []
    assert h.watermark(100) == ["+I[a, 1, 100]"]
    assert h.feed(r("+I", "a", 3, 150), r("+I", "b", 4, 50)) == []
    assert h.watermark(1000) == []


def test_keep_last_variants_and_insert_only_input() -> None:
    h = _run(RowTimeKeepLastRowFunction(_ts, generate_update_before=False))
    assert h.feed(r("+I", "a", 1, 10), r("+I", "a", 2, 10), r("+I", "a", 3, 5)) == [
        "+I[a, 1, 10]", "+U[a, 2, 10]"]
    h = _run(RowTimeKeepLastRowFunction(_ts, False, False))
    assert h.feed(r("+I", "a", 1, 10)) == ["+U[a, 1, 10]"]
    with pytest.raises(NotInsertOnlyError):
        h.feed(r("-D", "a", 1, 10))
