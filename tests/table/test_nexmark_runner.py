"""The Nexmark runner's bookkeeping (issue 33), without running an engine: the per-run time
limit (a timed-out run is reported as such, bounds the rate and is not repeated), and the
check's form (Spark's rows written as the print connector writes them, compared by digest)."""

from __future__ import annotations

import datetime
import decimal
import json
from typing import Any

from benchmarks.nexmark import check, printed, run
from benchmarks.nexmark.queries import BY_NAME
from flintlock.table.formatting.print_connector import print_connector_line


class FakeEngines:
    """Answers timed specs: ``slow`` runs time out, the others take ``events / 1e5`` s."""

    def __init__(self, slow: set[tuple[str, str, int]]) -> None:
        self.slow = slow
        self.specs: list[tuple[str, dict[str, Any]]] = []

    def run(self, engine: str, spec: dict[str, Any]) -> list[dict[str, Any]]:
        self.specs.append((engine, spec))
        results = []
        for r in spec["runs"]:
            outcome: dict[str, Any] = ({"timed_out": r["time_limit"]}
                                       if (engine, r["query"], r["events"]) in self.slow
                                       else {"elapsed": 1.0 + r["events"] / 1e5})
            results.append({"query": r["query"], "events": r["events"], **outcome})
        return results


def test_a_run_past_the_time_limit_is_reported_bounded_and_not_repeated(tmp_path):
    engines = FakeEngines({("spark", "q20", 2_000_000)})
    data = {200_000: tmp_path, 2_000_000: tmp_path}
    report = run.measure(engines, ["flintlock", "spark"],  # type: ignore[arg-type]
                         [BY_NAME["q0"], BY_NAME["q20"]], data, rounds=2, time_limit=30.0)
    spark_q20 = report["q20"]["spark"]
    assert spark_q20["rate"] is None
    assert spark_q20["timed_out"] == {"2000000": 30.0}
    # t(200k) = 3 s: the 2M run would have needed over 30 s, so the rate is below 1.8M / 27 s
    assert abs(spark_q20["rate_at_most"] - 1_800_000 / 27.0) < 1e-6
    assert report["q20"]["flintlock"]["rate"] == 1_800_000 / 18.0
    assert report["q20"]["flintlock"]["timed_out"] == {}
    spark_specs = [spec for engine, spec in engines.specs if engine == "spark"]
    asked = [[(r["query"], r["events"]) for r in spec["runs"][1:]] for spec in spark_specs]
    assert ("q20", 2_000_000) in asked[0]
    assert ("q20", 2_000_000) not in asked[1]  # not repeated once it timed out
    assert ("q20", 200_000) in asked[1]
    assert all(r["time_limit"] == 30.0 for spec in spark_specs for r in spec["runs"])


def test_without_a_timeout_there_is_no_bound():
    assert run.rate_at_most({1: [1.0], 2: [2.0]}, {}) is None
    assert run.rate_at_most({1: [], 2: []}, {1: 5.0, 2: 5.0}) is None


def test_sparks_rows_are_written_as_the_print_connector_writes_them():
    query = BY_NAME["q1"]
    values = (1007, 2001, decimal.Decimal("1.2E+2"), datetime.datetime(2015, 7, 15, 0, 0, 0, 1000),
              None)
    spark_row = json.dumps([1007, 2001, "1.2E+2", "2015-07-15 00:00:00.001", None])
    line = print_connector_line(values, check.sink_type(query))
    assert check.spark_printed(query, [spark_row]) == [line[len("+I["):-1]]
    assert line == "+I[1007, 2001, 120.000, 2015-07-15T00:00:00.001, null]"


def test_the_verdicts_compare_digests_and_row_counts_where_ties_allow_other_rows():
    rows = ["1, a", "2, b"]
    reference = printed.digests({"q0": rows})["q0"]
    same = printed.digests({"q0": list(reversed(rows))})["q0"]
    other = printed.digests({"q0": ["1, a", "2, c"]})["q0"]
    assert check.verdict(BY_NAME["q0"], same, reference, None) == "equal (2 rows)"
    assert check.verdict(BY_NAME["q0"], other, reference, None).startswith("differs")
    assert check.verdict(BY_NAME["q19"], other, reference, None) == "same row count (2)"
    assert check.verdict(BY_NAME["q0"], None, reference, "Boom: no\nmore").startswith(
        "error: Boom: no")
