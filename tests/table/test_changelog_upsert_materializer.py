"""``SinkUpsertMaterializer`` (``flintlock.datastream.changelog.upsert_materializer``, issue
28): per sink primary key the rows holding it; a retraction of the latest row re-emits the
one before it, a retraction of an older row emits nothing, the last one -D — Flink's
sequence."""

from __future__ import annotations

from pathlib import Path

from flintlock.datastream.changelog.rows import key_selector
from flintlock.datastream.changelog.upsert_materializer import SinkUpsertMaterializer
from tests.table.changelog_harness import Harness, r


def _run(function) -> Harness:
    return Harness(function, [key_selector((0,))])


def test_retractions_out_of_order_leave_the_latest_row() -> None:
    h = _run(SinkUpsertMaterializer())
    assert h.feed(r("+I", 1, "a"), r("+U", 1, "b")) == ["+I[1, a]", "+U[1, b]"]
    assert h.feed(r("-U", 1, "a")) == []
    assert h.feed(r("+I", 1, "c"), r("-D", 1, "c")) == ["+U[1, c]", "+U[1, b]"]
    assert h.feed(r("-D", 1, "x")) == []
    assert h.feed(r("-D", 1, "b")) == ["-D[1, b]"]
    assert h.feed(r("+I", 1, "d")) == ["+I[1, d]"]


def test_an_upsert_key_replaces_the_row_with_the_same_key() -> None:
    h = _run(SinkUpsertMaterializer(upsert_key=(1,)))
    assert h.feed(r("+I", 1, "k1", 10), r("+I", 1, "k2", 20), r("+U", 1, "k1", 11)) == [
        "+I[1, k1, 10]", "+U[1, k2, 20]", "+U[1, k1, 11]"]
    assert h.feed(r("-D", 1, "k2", 20)) == ["+U[1, k1, 11]"]
    assert h.feed(r("-U", 1, "k1", 0)) == ["-D[1, k1, 0]"]


def test_what_flinks_primary_key_sink_received() -> None:
    """The input of ``tests/table/oracle/changelog_upsert_materialize.py``; its print sink
    showed ``tests/table/fixtures/changelog_upsert_materialize.txt`` on PyFlink 2.3.0."""
    fixture = Path(__file__).parent / "fixtures" / "changelog_upsert_materialize.txt"
    flink = [line for line in fixture.read_text().splitlines() if line != "=== END"]
    events = [("+I", 1, "a"), ("+I", 1, "b"), ("-D", 1, "a"), ("+I", 1, "c"), ("-D", 1, "c"),
              ("-D", 1, "x"), ("-D", 1, "b"), ("+I", 1, "d")]
    h = _run(SinkUpsertMaterializer())
    assert h.feed(*(r(*event) for event in events)) == flink
