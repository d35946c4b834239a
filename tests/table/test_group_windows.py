"""The Table API's group windows and the legacy SQL GROUP BY TUMBLE/HOP/SESSION (issue 32):
both become the window aggregation of the window table functions, named and typed as Flink
names and types them; a window that is not usable is refused with a clear error."""

from __future__ import annotations

import pytest

from flintlock.table import EnvironmentSettings, TableEnvironment
from flintlock.table.errors import ValidationError
from flintlock.table.expressions import col, lit
from flintlock.table.plan.window_nodes import WindowAggregate
from flintlock.table.window import Session, Slide, Tumble


@pytest.fixture
def t_env() -> TableEnvironment:
    env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    env.execute_sql("""
        CREATE TABLE t (k STRING, v INT, ts TIMESTAMP(3), pt AS PROCTIME(),
                        WATERMARK FOR ts AS ts)
        WITH ('connector' = 'datagen')""")
    return env


def _window_node(table) -> WindowAggregate:
    found = [node for node in table._plan.walk() if isinstance(node, WindowAggregate)]
    assert len(found) == 1
    return found[0]


def test_group_windows_are_window_aggregations(t_env) -> None:
    table = t_env.from_path("t")
    tumble = table.window(Tumble.over(lit(10).minutes).on(col("ts")).alias("w")) \
        .group_by(col("k"), col("w")).select(col("k"), col("v").sum, col("w").start,
                                             col("w").rowtime)
    assert _window_node(tumble).window.describe() == "TUMBLE(size=[10 min])"
    assert tumble.get_schema().get_field_names() == ["k", "EXPR$0", "EXPR$1", "EXPR$2"]
    assert str(tumble.get_resolved_schema()).splitlines()[3:5] == [
        "  `EXPR$1` TIMESTAMP(3),", "  `EXPR$2` TIMESTAMP(3) *ROWTIME*"]
    slide = table.window(Slide.over(lit(5).seconds).every(lit(2).seconds).on(col("ts"))
                         .alias("w")).group_by(col("w")).select(col("v").count)
    assert _window_node(slide).window.describe() == "HOP(size=[5 s], slide=[2 s])"
    session = table.window(Session.with_gap(lit(3).hours).on(col("ts")).alias("s")) \
        .group_by(col("s")).select(col("s").end.alias("e"))
    assert _window_node(session).window.describe() == "SESSION(gap=[3 h])"


def test_legacy_sql_group_windows(t_env) -> None:
    query = t_env.sql_query(
        "SELECT k, HOP_END(ts, INTERVAL '1' MINUTE, INTERVAL '1' HOUR), COUNT(*) AS n "
        "FROM t GROUP BY HOP(ts, INTERVAL '1' MINUTE, INTERVAL '1' HOUR), k")
    assert _window_node(query).window.describe() == "HOP(size=[1 h], slide=[1 min])"
    assert query.get_schema().get_field_names() == ["k", "EXPR$1", "n"]


@pytest.mark.parametrize(("build", "error", "message"), [
    (lambda t: t.window(Tumble.over(lit(1).seconds).on(col("ts"))).group_by(col("k")),
     ValidationError, "needs an alias"),
    (lambda t: t.window(Tumble.over(lit(1).seconds).on(col("ts")).alias("w"))
     .group_by(col("k")), ValidationError, "must be grouped by"),
    (lambda t: t.window(Tumble.over(lit(1).seconds).on(col("v")).alias("w"))
     .group_by(col("w")), ValidationError, "expects a time attribute"),
    (lambda t: t.window(Tumble.over(lit(1).seconds).on(col("ts")).alias("w"))
     .group_by(col("w")).select(col("w").proctime), ValidationError, "no proctime property"),
])
def test_unusable_group_windows_are_refused(t_env, build, error, message) -> None:
    with pytest.raises(error, match=message):
        result = build(t_env.from_path("t"))
        result.select(col("v").sum)
