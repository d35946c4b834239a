"""``table.exec.state.ttl`` and regular joins (issue 32 item 3): the option reaches the
planned ``StreamingJoinFunction``, whose rows then expire that long after they were written
(a row arriving later finds no match), as Flink's join state retention makes them; without
it they are kept. Interval and temporal joins clean their state with timers instead."""

from __future__ import annotations

from flintlock.datastream.changelog.join import JoinType, StreamingJoinFunction
from flintlock.runtime.state.heap import HeapKeyedStateBackend
from flintlock.runtime.state.keygroups import KeyGroupRange
from flintlock.table import EnvironmentSettings, TableEnvironment
from tests.table.changelog_harness import Harness, r


class ManualClock:
    def __init__(self) -> None:
        self.ms = 1_000_000

    def now_ms(self) -> float:
        return float(self.ms)

    def wall_ms(self) -> int:
        return self.ms


def _join(clock: ManualClock, retention_ms: int) -> Harness:
    function = StreamingJoinFunction(JoinType.INNER, 2, 2, (0,), (0,),
                                     state_retention_ms=retention_ms)
    backend = HeapKeyedStateBackend(KeyGroupRange(0, 127), 128, clock)
    return Harness(function, [function.left_key_selector(), function.right_key_selector()],
                   state=backend)


def test_rows_expire_after_the_retention_time():
    clock = ManualClock()
    h = _join(clock, 1000)
    h.feed(r("+I", 1, "old"))
    clock.ms += 999
    assert h.feed(r("+I", 1, "x"), side=1) == ["+I[1, old, 1, x]"]
    clock.ms += 2
    assert h.feed(r("+I", 1, "y"), side=1) == []  # "old" expired; "x" is 2 ms old
    assert h.feed(r("+I", 1, "new")) == ["+I[1, new, 1, x]", "+I[1, new, 1, y]"]


def test_rows_are_kept_without_a_retention_time():
    clock = ManualClock()
    h = _join(clock, 0)
    h.feed(r("+I", 1, "old"))
    clock.ms += 10_000_000
    assert h.feed(r("+I", 1, "y"), side=1) == ["+I[1, old, 1, y]"]


def test_the_option_reaches_the_planned_join():
    t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    t_env.get_config().set("table.exec.state.ttl", "90 s")
    t_env.execute_sql("CREATE TABLE a (id INT, v STRING) WITH ('connector' = 'datagen')")
    t_env.execute_sql("CREATE TABLE b (id INT, w STRING) WITH ('connector' = 'datagen')")
    plan = t_env.sql_query("SELECT * FROM a LEFT JOIN b ON a.id = b.id")._plan
    stream = t_env._translator(t_env._job_environment()).stream(plan)
    function = stream._transformation.spec.function
    assert isinstance(function, StreamingJoinFunction)
    assert function.state_retention_ms == 90_000
