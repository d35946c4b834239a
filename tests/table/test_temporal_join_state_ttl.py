"""``table.exec.state.ttl`` on the event-time temporal join
(``changelog.temporal_join``, issue 32 item 3), as Flink 2.3's ``TemporalRowTimeJoinOperator``
retains state: each row of a key pushes a processing-time clean-up timer to now + 1.5 x the
retention (unless the registered one is later than now + the retention); when it fires the
key's waiting rows and versions are gone. Without the option nothing is cleaned by time."""

from __future__ import annotations

from flintlock.datastream.changelog.temporal_join import TemporalRowTimeJoinFunction
from flintlock.table import EnvironmentSettings, TableEnvironment
from flintlock.testing.operators import ManualTimers
from tests.table.changelog_harness import Harness, r


class TimeOf:
    def __call__(self, row):
        return row[1]


def _join(retention_ms: int, left_outer: bool = False) -> tuple[Harness, ManualTimers]:
    function = TemporalRowTimeJoinFunction(3, 3, (0,), (0,), TimeOf(), TimeOf(),
                                           left_outer=left_outer,
                                           state_retention_ms=retention_ms)
    timers = ManualTimers()
    harness = Harness(function, [function.left_key_selector(), function.right_key_selector()],
                      timers=timers)
    return harness, timers


def _tables(h: Harness) -> dict[str, int]:
    """The function's non-empty keyed states (the timer service's own tables left out: a
    pending event-time timer stays after a clean-up, as in Flink, and finds nothing)."""
    return {name: len(table) for name, table in h.backend._tables.items()
            if table and not name.startswith("_flintlock")}


def test_an_idle_key_loses_its_waiting_rows_and_versions_after_one_and_a_half_ttl():
    h, timers = _join(1000)
    h.feed(r("+I", "EUR", 0, 1.1), r("+I", "GBP", 2, 1.3), side=1)
    h.feed(r("+I", "EUR", 5, "o1"))
    timers.advance(400)  # 400 + 1000 is not later than the timer (0 + 1500): not pushed
    h.feed(r("+I", "GBP", 3, "g1"))
    timers.advance(1099)
    assert _tables(h)["left"] == 2
    timers.advance(1)  # 1500: both keys are cleaned
    assert _tables(h) == {}
    assert h.watermark(10) == []


def test_a_row_after_the_retention_minus_half_pushes_the_clean_up():
    h, timers = _join(1000)
    h.feed(r("+I", "EUR", 0, 1.1), side=1)
    timers.advance(501)  # 501 + 1000 > 1500: moved to 501 + 1500
    h.feed(r("+I", "EUR", 5, "o1"))
    timers.advance(999)  # 1500: the first timer was deleted
    assert h.watermark(10) == ["+I[EUR, 5, o1, EUR, 0, 1.1]"]
    # the watermark's pass keeps a version: it pushed the clean-up to 1500 + 1500
    timers.advance(1499)
    assert _tables(h)["right"] == 1
    timers.advance(1)
    assert _tables(h) == {}
    h.feed(r("+I", "EUR", 20, "o2"))
    assert h.watermark(30) == []  # the version is gone: an inner join finds nothing


def test_after_the_watermark_a_key_with_nothing_left_drops_its_clean_up_timer():
    h, timers = _join(1000, left_outer=True)
    h.feed(r("+I", "EUR", 5, "o1"))
    timers.advance(100)
    assert h.watermark(10) == ["+I[EUR, 5, o1, null, null, null]"]
    assert _tables(h) == {}  # no clean-up timestamp, no arrival counter


def test_without_a_retention_state_stays_however_long_a_key_is_idle():
    h, timers = _join(0)
    h.feed(r("+I", "EUR", 0, 1.1), side=1)
    h.feed(r("+I", "EUR", 5, "o1"))
    timers.advance(10_000_000)
    assert h.watermark(10) == ["+I[EUR, 5, o1, EUR, 0, 1.1]"]


def test_the_option_reaches_the_planned_temporal_join():
    t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    t_env.get_config().set("table.exec.state.ttl", "90 s")
    t_env.execute_sql("""CREATE TABLE orders (cur STRING, ts TIMESTAMP(3),
        WATERMARK FOR ts AS ts) WITH ('connector' = 'datagen')""")
    t_env.execute_sql("""CREATE TABLE rates (cur STRING, rate DOUBLE, ts TIMESTAMP(3),
        WATERMARK FOR ts AS ts, PRIMARY KEY (cur) NOT ENFORCED) WITH ('connector' = 'datagen')""")
    plan = t_env.sql_query("SELECT * FROM orders o JOIN rates FOR SYSTEM_TIME AS OF o.ts AS r "
                           "ON o.cur = r.cur")._plan
    stream = t_env._translator(t_env._job_environment()).stream(plan)
    while not isinstance(getattr(stream._transformation.spec, "function", None),
                         TemporalRowTimeJoinFunction):
        stream = stream._transformation.inputs[0]
    function = stream._transformation.spec.function
    assert (function.min_retention_ms, function.max_retention_ms) == (90_000, 135_000)
