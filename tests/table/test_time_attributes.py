"""Time attributes (issue 32): the SQL watermark generator as Flink's WatermarkAssignerOperator
runs it (the largest watermark so far, from 0, due after the record that moved it more than
the interval), rowtime and PROCTIME() columns in schemas, SOURCE_WATERMARK(), and the errors
Flink gives for a bad time column."""

from __future__ import annotations

import pytest

from flintlock.common.watermark_strategy import WatermarkStrategy
from flintlock.runtime.tasks.watermarks import WatermarkEmitter
from flintlock.table import EnvironmentSettings, TableEnvironment
from flintlock.table.errors import ValidationError


class _Output:
    def __init__(self) -> None:
        self.events: list[object] = []

    def emit_watermark(self, timestamp: int) -> None:
        self.events.append(timestamp)

    def emit_watermark_status(self, idle: bool) -> None:
        self.events.append("idle" if idle else "active")


def _emitter(interval: int, idle_ms: int | None = None):
    strategy = WatermarkStrategy.for_watermark_expression(lambda v: None if v is None else v - 3)
    if idle_ms is not None:
        from flintlock.common.time import Duration

        strategy = strategy.with_idleness(Duration.of_millis(idle_ms))
    output = _Output()
    clock = [0]
    return WatermarkEmitter(strategy, output, lambda: clock[0], interval), output, clock


def test_expression_watermarks_are_due_after_the_record_that_moved_them_enough() -> None:
    emitter, output, _ = _emitter(interval=200)
    # from 0: negative watermarks never go out; 1000-3 passes 0 by more than 200
    assert emitter.eager_watermarks([1, 2, 1000, 1100, 1300, None, 1250]) == [(3, 997),
                                                                             (5, 1297)]
    emitter.on_periodic_emit()  # nothing new beyond 1297
    assert output.events == []
    emitter.eager_watermarks([1400])  # +100: not eager, the periodic emission sends it
    emitter.on_periodic_emit()
    assert output.events == [1397]
    emitter.end(2**63 - 1)
    assert output.events == [1397, 2**63 - 1]


def test_an_idle_expression_source_goes_idle_and_comes_back() -> None:
    emitter, output, clock = _emitter(interval=0, idle_ms=50)
    assert emitter.eager_watermarks([10]) == [(1, 7)]
    clock[0] = 60
    emitter.on_periodic_emit()
    emitter.eager_watermarks([20])
    assert output.events == ["idle", "active"]


def _env() -> TableEnvironment:
    return TableEnvironment.create(EnvironmentSettings.in_streaming_mode())


def test_rowtime_and_proctime_columns_in_print_schema(capsys) -> None:
    t_env = _env()
    t_env.execute_sql("""
        CREATE TABLE t (a INT, ts TIMESTAMP(3), pt AS PROCTIME(),
                        WATERMARK FOR ts AS ts - INTERVAL '5' SECOND)
        WITH ('connector' = 'datagen')""")
    t_env.from_path("t").print_schema()
    t_env.sql_query("SELECT a, ts, pt, CAST(ts AS TIMESTAMP(3)) AS plain FROM t").print_schema()
    assert capsys.readouterr().out == (
        "(\n  `a` INT,\n  `ts` TIMESTAMP(3) *ROWTIME*,\n"
        "  `pt` TIMESTAMP_LTZ(3) NOT NULL *PROCTIME* AS PROCTIME(),\n"
        "  WATERMARK FOR `ts`: TIMESTAMP(3) AS `ts` - INTERVAL '5' SECOND\n)\n"
        "(\n  `a` INT,\n  `ts` TIMESTAMP(3) *ROWTIME*,\n"
        "  `pt` TIMESTAMP_LTZ(3) NOT NULL *PROCTIME*,\n  `plain` TIMESTAMP(3)\n)\n")


@pytest.mark.parametrize(("ddl", "message"), [
    ("a INT, WATERMARK FOR a AS a", "must be of type TIMESTAMP(p) or TIMESTAMP_LTZ(p)"),
    ("ts TIMESTAMP(6), WATERMARK FOR ts AS ts", "the supported precision 'p' is from 0 to 3"),
    ("ts TIMESTAMP(3), WATERMARK FOR nope AS ts", "Invalid column name 'nope'"),
])
def test_bad_time_columns_are_refused_as_flink_refuses_them(ddl, message) -> None:
    t_env = _env()
    with pytest.raises(ValidationError, match=message.replace("(", r"\(").replace(")", r"\)")):
        t_env.execute_sql(f"CREATE TABLE t ({ddl}) WITH ('connector' = 'datagen')")
    assert "t" not in t_env.list_tables()


def test_a_window_needs_a_time_attribute() -> None:
    t_env = _env()
    t_env.execute_sql("CREATE TABLE t (a INT, ts TIMESTAMP(3)) WITH ('connector' = 'datagen')")
    with pytest.raises(ValidationError, match="requires the timecol to be a time attribute"):
        t_env.sql_query("SELECT * FROM TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), "
                        "INTERVAL '1' MINUTE))")


def _instant_stream(env):
    from flintlock.common import Types
    from flintlock.common.time import Instant

    return env.from_collection(
        [(Instant.of_epoch_milli(1000), "Alice", 1), (Instant.of_epoch_milli(4000), "Bob", 2),
         (Instant.of_epoch_milli(90_000_000), "Alice", 3)],
        type_info=Types.ROW([Types.INSTANT(), Types.STRING(), Types.INT()]))


def _rows(table) -> list[tuple]:
    with table.execute().collect() as results:
        return [tuple(row) for row in results]


def test_ltz_windows_align_in_the_session_time_zone(monkeypatch) -> None:
    import datetime

    from flintlock.datastream import StreamExecutionEnvironment
    from flintlock.table import DataTypes, Schema, StreamTableEnvironment
    from flintlock.testing.executor import use_thread_executor

    use_thread_executor(monkeypatch)
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(1)
    t_env = StreamTableEnvironment.create(env)
    t_env.get_config().set("table.local-time-zone", "Asia/Shanghai")
    table = t_env.from_data_stream(_instant_stream(env), Schema.new_builder()
                                   .column("f0", DataTypes.TIMESTAMP_LTZ(3))
                                   .column("f1", DataTypes.STRING())
                                   .watermark("f0", "f0 - INTERVAL '1' SECOND").build())
    t_env.create_temporary_view("t", table)
    rows = _rows(t_env.sql_query(
        "SELECT f1, window_start, window_end, COUNT(*) FROM TABLE(TUMBLE(TABLE t, "
        "DESCRIPTOR(f0), INTERVAL '1' DAY)) GROUP BY f1, window_start, window_end"))
    day = datetime.datetime(1970, 1, 1)
    # 1 s after the epoch is 08:00:01 in Shanghai: the window is that local day;
    # 25 h after it is 09:00 on Jan 2nd local time
    assert rows == [("Alice", day, day + datetime.timedelta(days=1), 1),
                    ("Bob", day, day + datetime.timedelta(days=1), 1),
                    ("Alice", day + datetime.timedelta(days=1),
                     day + datetime.timedelta(days=2), 1)]


def test_source_watermark_keeps_the_streams_watermarks(monkeypatch) -> None:
    from flintlock.common import Duration, WatermarkStrategy
    from flintlock.common.watermark_strategy import TimestampAssigner
    from flintlock.datastream import StreamExecutionEnvironment
    from flintlock.table import Schema, StreamTableEnvironment
    from flintlock.testing.executor import use_thread_executor

    class First(TimestampAssigner):
        def extract_timestamp(self, value, record_timestamp):
            return value[0].to_epoch_milli()

    use_thread_executor(monkeypatch)
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(1)
    t_env = StreamTableEnvironment.create(env)
    stream = _instant_stream(env).assign_timestamps_and_watermarks(
        WatermarkStrategy.for_bounded_out_of_orderness(Duration.of_seconds(1))
        .with_timestamp_assigner(First()))
    table = t_env.from_data_stream(stream, Schema.new_builder()
                                   .column_by_expression("ts", "CAST(f0 AS TIMESTAMP_LTZ(3))")
                                   .watermark("ts", "SOURCE_WATERMARK()").build())
    assert "`ts` TIMESTAMP_LTZ(3) *ROWTIME*" in str(table.get_resolved_schema())
    t_env.create_temporary_view("t", table)
    rows = _rows(t_env.sql_query(
        "SELECT f1, SUM(f2) FROM TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), INTERVAL '1' HOUR)) "
        "GROUP BY f1, window_start, window_end"))
    assert sorted(rows) == [("Alice", 1), ("Alice", 3), ("Bob", 2)]


class _MinusThree:
    """``v - 3`` that also says so (``timestamp_offset``): the emitter may compute the
    watermarks from the timestamps instead of calling it."""
    timestamp_offset = 3

    def __call__(self, value: int) -> int:
        return value - 3


def _emitters() -> tuple[WatermarkEmitter, WatermarkEmitter]:
    """(per row, from the timestamps) emitters of the watermark ``ts - 3``."""
    return (WatermarkEmitter(WatermarkStrategy.for_watermark_expression(lambda v: v - 3),
                             _Output(), lambda: 0, 200),
            WatermarkEmitter(WatermarkStrategy.for_watermark_expression(_MinusThree()),
                             _Output(), lambda: 0, 200))


def test_watermarks_from_the_timestamps_are_the_per_row_ones() -> None:
    import random

    rng = random.Random(7)
    plain, batched = _emitters()
    base = 0
    for _ in range(300):  # batches that stay below the interval, jump it, go back in time
        base += rng.choice([0, 5, 150, 1000])
        batch = [base + rng.randint(-300, 300) for _ in range(rng.randint(1, 20))]
        assert batched.eager_watermarks(batch, batch) == plain.eager_watermarks(batch)
        assert (batched._largest, batched._emitted) == (plain._largest, plain._emitted)
    assert plain._emitted > 50_000  # the watermarks moved all along


def test_watermarks_of_batches_in_time_order_are_the_per_row_ones() -> None:
    import random

    rng = random.Random(11)
    plain, batched = _emitters()
    base, due = 0, 0
    for _ in range(300):  # in order within a batch (runs, steps under and over the interval)
        base += rng.choice([-2000, 0, 5, 150, 1000])
        batch = []
        for _ in range(rng.randint(1, 40)):
            base += rng.choice([0, 0, 100, 199, 200, 201, 450])
            batch.append(base)
        expected = plain.eager_watermarks(batch)
        assert batched.eager_watermarks(batch, batch) == expected
        assert (batched._largest, batched._emitted) == (plain._largest, plain._emitted)
        due += len(expected) > 1
    assert due > 30  # batches with several watermarks due were among them


def test_the_watermark_offset_is_found_only_for_rowtime_minus_a_constant() -> None:
    import datetime

    from flintlock.table import types as t
    from flintlock.table.plan.rex import Call, InputRef, Literal
    from flintlock.table.planner.windows import timestamp_offset

    ts = InputRef(t.TimestampType(3, False), 1)
    second = Literal(t.DataTypes.INTERVAL(t.DataTypes.SECOND()), datetime.timedelta(seconds=1))
    assert timestamp_offset(Call(ts.type, "-", (ts, second)), 1) == 1000
    assert timestamp_offset(ts, 1) == 0
    assert timestamp_offset(Call(ts.type, "-", (ts, second)), 0) is None  # not the rowtime
    assert timestamp_offset(Call(ts.type, "+", (ts, second)), 1) is None
    micro = Literal(second.type, datetime.timedelta(microseconds=1500))
    assert timestamp_offset(Call(ts.type, "-", (ts, micro)), 1) is None  # not whole ms
    ltz = InputRef(t.LocalZonedTimestampType(3, False), 1)
    assert timestamp_offset(Call(ltz.type, "-", (ltz, second)), 1) is None


def test_rowtime_timestamps_of_a_batch_are_the_per_row_ones() -> None:
    import datetime

    from flintlock.common.types import Row
    from flintlock.table.planner.windows import RowtimeAssigner, RowtimeNullError

    assigner = RowtimeAssigner(1)
    naive = [Row(i, datetime.datetime(2024, 1, 1, 0, 0, i % 60, i * 1111)) for i in range(50)]
    berlin = datetime.timezone(datetime.timedelta(hours=1))
    mixed = [*naive[:3], Row(9, datetime.datetime(2024, 1, 1, tzinfo=berlin)), Row(8, 5)]
    for batch in (naive, mixed, []):
        assert assigner.extract_timestamps(batch) == [
            assigner.extract_timestamp(row, 0) for row in batch]
    with pytest.raises(RowtimeNullError):
        assigner.extract_timestamps([naive[0], Row(1, None)])
