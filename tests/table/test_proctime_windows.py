"""Processing-time windows (issue 32): TUMBLE / HOP / CUMULATE / SESSION over a ``PROCTIME()``
column, the Table API's group windows ``.on(col('pt'))`` with ``w.proctime``, and the legacy
``GROUP BY TUMBLE(pt, ...)`` — their schemas as PyFlink 2.3.0 prints them, and jobs on thread
TaskManagers whose windows fire on processing-time timers while the job runs; and over
aggregation on processing time (the operator on a manual clock).

A window's bounds depend on the clock, so the jobs check what does not: every row is counted
once (TUMBLE) or once per window it belongs to (HOP), and each window has its size. The
source holds at a gate after its rows until the windows have fired (their results reach a
file), then ends: as in Flink, a window still open when the input ends never fires.
"""

from __future__ import annotations

import datetime
import os

import pytest

from flintlock.common.watermark_strategy import WatermarkStrategy
from flintlock.datastream import StreamExecutionEnvironment
from flintlock.datastream.functions import MapFunction
from flintlock.table import (
    DataTypes,
    EnvironmentSettings,
    Schema,
    StreamTableEnvironment,
    TableEnvironment,
)
from flintlock.table.errors import TableException, UnsupportedFeatureError
from flintlock.table.expressions import col, lit
from flintlock.table.window import Slide, Tumble
from flintlock.testing.executor import use_thread_executor
from flintlock.testing.gates import FileGate, GatedNumberSequenceSource, open_when

N = 40
DDL = ("CREATE TABLE src (k STRING, v INT, pt AS PROCTIME()) WITH ('connector' = 'datagen', "
       "'number-of-rows' = '10')")


class RecordCounts(MapFunction):
    """Appends ``count end-start`` of each window row to a file the test watches."""

    def __init__(self, path: str, count: int, start: int, end: int) -> None:
        self.path, self.count, self.start, self.end = path, count, start, end

    def map(self, row):
        width = (row[self.end] - row[self.start]) // datetime.timedelta(milliseconds=1)
        with open(self.path, "a", encoding="utf-8") as handle:
            handle.write(f"{row[self.count]} {width}\n")
        return row


def _lines(path) -> list[tuple[int, int]]:
    if not os.path.exists(path):
        return []
    with open(path, encoding="utf-8") as handle:
        return [tuple(int(x) for x in line.split()) for line in handle if line.strip()]


def _job(monkeypatch, tmp_path, query, expected_total, positions):
    """Runs ``query`` (a function of the table env) over N numbers with a PROCTIME column;
    returns the (count, width) lines once their counts add up to ``expected_total``."""
    use_thread_executor(monkeypatch)
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(1)
    t_env = StreamTableEnvironment.create(env)
    gate = FileGate(tmp_path / "gate")
    # N numbers, then the source holds before N + 1 (left out by the view) until the gate
    # opens: the input must not end before the windows fired
    numbers = env.from_source(GatedNumberSequenceSource(1, N + 1, gate, before_gate=N),
                              WatermarkStrategy.no_watermarks(), "numbers")
    table = t_env.from_data_stream(numbers, Schema.new_builder()
                                   .column("f0", DataTypes.BIGINT())
                                   .column_by_expression("pt", "PROCTIME()").build())
    t_env.create_temporary_view("nums", table.where(col("f0") <= N))
    out = str(tmp_path / "windows.txt")
    result = t_env.to_data_stream(query(t_env))
    result.map(RecordCounts(out, *positions)).print()
    opener = open_when(gate, lambda: sum(c for c, _ in _lines(out)) >= expected_total)
    env.execute("processing-time windows")
    opener.join(60)
    return _lines(out)


def test_tumble_tvf_on_proctime_counts_every_row_once(monkeypatch, tmp_path):
    def query(t_env):
        return t_env.sql_query(
            "SELECT window_start, window_end, COUNT(*) AS c, SUM(f0) AS s FROM TABLE("
            "TUMBLE(TABLE nums, DESCRIPTOR(pt), INTERVAL '50' MILLISECOND)) "
            "GROUP BY window_start, window_end")

    lines = _job(monkeypatch, tmp_path, query, N, (2, 0, 1))
    assert sum(c for c, _ in lines) == N
    assert {width for _, width in lines} == {50}


def test_slide_group_window_on_proctime_counts_each_row_per_window(monkeypatch, tmp_path):
    def query(t_env):
        return (t_env.from_path("nums")
                .window(Slide.over(lit(100).millis).every(lit(50).millis).on(col("pt"))
                        .alias("w"))
                .group_by(col("w"))
                .select(col("w").start, col("w").end, col("w").proctime, col("f0").count))

    lines = _job(monkeypatch, tmp_path, query, 2 * N, (3, 0, 1))
    assert sum(c for c, _ in lines) == 2 * N  # every row in two windows of a 50 ms slide
    assert {width for _, width in lines} == {100}


def test_session_window_on_proctime_counts_every_row_once(monkeypatch, tmp_path):
    def query(t_env):
        return t_env.sql_query(
            "SELECT SESSION_START(pt, INTERVAL '50' MILLISECOND) AS s, "
            "SESSION_END(pt, INTERVAL '50' MILLISECOND) AS e, COUNT(*) AS c FROM nums "
            "GROUP BY SESSION(pt, INTERVAL '50' MILLISECOND)")

    lines = _job(monkeypatch, tmp_path, query, N, (2, 0, 1))
    assert sum(c for c, _ in lines) == N
    assert all(width >= 50 for _, width in lines)  # a session lasts its gap past its last row


# -- planning ------------------------------------------------------------------------------------

@pytest.fixture
def t_env():
    env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    env.execute_sql(DDL)
    return env


def _schema(table) -> str:
    return str(table.get_resolved_schema())


def test_schemas_are_flinks(t_env):
    tvf = t_env.sql_query(
        "SELECT window_start, window_end, window_time, COUNT(*) AS c FROM TABLE(TUMBLE("
        "TABLE src, DESCRIPTOR(pt), INTERVAL '1' HOUR)) GROUP BY window_start, window_end, "
        "window_time")
    assert "`window_time` TIMESTAMP_LTZ(3) NOT NULL *PROCTIME*" in _schema(tvf)
    group = (t_env.from_path("src").window(Tumble.over(lit(1).hours).on(col("pt")).alias("w"))
             .group_by(col("w")).select(col("w").start, col("w").proctime, col("v").sum))
    assert _schema(group) == ("(\n  `EXPR$0` TIMESTAMP(3),\n  `EXPR$1` TIMESTAMP_LTZ(3) NOT NULL "
                              "*PROCTIME*,\n  `EXPR$2` INT\n)")
    legacy = t_env.sql_query(
        "SELECT TUMBLE_START(pt, INTERVAL '1' HOUR), TUMBLE_PROCTIME(pt, INTERVAL '1' HOUR), "
        "COUNT(*) FROM src GROUP BY TUMBLE(pt, INTERVAL '1' HOUR)")
    assert _schema(legacy) == ("(\n  `EXPR$0` TIMESTAMP(3) NOT NULL,\n  `EXPR$1` "
                               "TIMESTAMP_LTZ(3) NOT NULL *PROCTIME*,\n  `EXPR$2` BIGINT NOT "
                               "NULL\n)")


def test_what_is_not_supported_on_proctime(t_env):
    with pytest.raises(UnsupportedFeatureError, match="SESSION window table function"):
        t_env.sql_query("SELECT * FROM TABLE(SESSION(TABLE src, DESCRIPTOR(pt), "
                        "INTERVAL '1' MINUTE))").execute()
    top = ("SELECT * FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY window_start, window_end "
           "ORDER BY {}) AS rn FROM TABLE(TUMBLE(TABLE src, DESCRIPTOR(pt), "
           "INTERVAL '1' MINUTE))) WHERE rn <= {}")
    with pytest.raises(TableException, match=r"^Processing time Window TopN is not supported"):
        t_env.sql_query(top.format("v DESC", 2))
    with pytest.raises(TableException, match="Processing time Window Deduplication is not"):
        t_env.sql_query(top.format("pt DESC", 1))
    tvf = "(SELECT * FROM TABLE(TUMBLE(TABLE src, DESCRIPTOR(pt), INTERVAL '1' DAY)))"
    with pytest.raises(TableException, match="Processing time Window Join is not supported"):
        t_env.sql_query(f"SELECT a.k FROM {tvf} a JOIN {tvf} b ON a.k = b.k AND "
                        "a.window_start = b.window_start AND a.window_end = b.window_end")


# -- over aggregation on processing time (the operator, on a manual clock) -------------------------

def _over(rows, preceding):
    from flintlock.datastream.changelog import aggregates
    from flintlock.datastream.changelog.group_agg import AggregateCall
    from flintlock.datastream.changelog.over_agg import OverAggFunction

    calls = [AggregateCall(aggregates.Sum(), (1,)), AggregateCall(aggregates.Count1())]
    return OverAggFunction((0,), calls, lambda row: 0, rows, preceding, proctime=True)


def test_proctime_over_emits_each_row_at_once_over_the_rows_before_it():
    from flintlock.testing.operators import ManualTimers
    from tests.table.changelog_harness import Harness, r

    unbounded = _over(False, None)  # the default RANGE UNBOUNDED frame, too, row by row
    h = Harness(unbounded, [unbounded.key_selector()], timers=ManualTimers(1000))
    assert h.feed(r("+I", "a", 1), r("+I", "a", 2)) == ["+I[a, 1, 1, 1]", "+I[a, 2, 3, 2]"]
    assert h.feed(r("+I", "b", 5)) == ["+I[b, 5, 5, 1]"]
    rows = _over(True, 1)
    h = Harness(rows, [rows.key_selector()], timers=ManualTimers(1000))
    assert h.feed(r("+I", "a", 1), r("+I", "a", 2), r("+I", "a", 4)) == [
        "+I[a, 1, 1, 1]", "+I[a, 2, 3, 2]", "+I[a, 4, 6, 2]"]


def test_proctime_range_over_waits_for_the_next_millisecond():
    from flintlock.testing.operators import ManualTimers
    from tests.table.changelog_harness import Harness, r

    function = _over(False, 10)
    timers = ManualTimers(1000)
    h = Harness(function, [function.key_selector()], timers=timers)
    assert h.feed(r("+I", "a", 1), r("+I", "a", 2)) == []
    timers.advance(1)  # the rows of 1000 come out together, sharing their frame
    assert [tuple(x) for x in h.rows()] == [("a", 1, 3, 2), ("a", 2, 3, 2)]
    timers.advance(20)
    h.feed(r("+I", "a", 4))
    timers.advance(1)  # 1021: the rows of 1000 are more than 10 ms behind
    assert [tuple(x) for x in h.rows()][-1] == ("a", 4, 4, 1)
