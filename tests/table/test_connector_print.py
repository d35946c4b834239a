"""The ``print`` and ``blackhole`` table connectors through SQL on TaskManager threads: the
lines PyFlink 2.3.0 prints (tests/table/oracle/connectors.py), the identifier and stderr
options, updates, ``sink.parallelism``."""

import pytest

from flintlock.table import EnvironmentSettings, TableEnvironment
from flintlock.table.errors import ValidationError
from flintlock.testing.executor import use_thread_executor

GROUP_BY = ("SELECT k, COUNT(*) FROM (VALUES ('a'), ('a'), ('b')) AS t(k) GROUP BY k")


@pytest.fixture
def t_env(monkeypatch):
    use_thread_executor(monkeypatch)
    env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    env.get_config().set("parallelism.default", "1")
    return env


def test_identifier_and_nulls_as_pyflink_prints_them(t_env, capfd):
    t_env.execute_sql("CREATE TABLE p (a INT, b STRING) WITH ('connector' = 'print', "
                      "'print-identifier' = 'out')")
    t_env.execute_sql("INSERT INTO p VALUES (1, 'x'), (2, CAST(NULL AS STRING))").wait()
    assert sorted(capfd.readouterr().out.splitlines()) == ["out> +I[1, x]", "out> +I[2, null]"]


def test_updates_are_printed_with_their_kinds(t_env, capfd):
    t_env.execute_sql("CREATE TABLE p (k STRING, c BIGINT) WITH ('connector' = 'print')")
    t_env.execute_sql(f"INSERT INTO p {GROUP_BY}").wait()
    assert capfd.readouterr().out.splitlines() == [
        "+I[a, 1]", "-U[a, 1]", "+U[a, 2]", "+I[b, 1]"]


def test_standard_error_and_sink_parallelism(t_env, capfd):
    t_env.execute_sql("CREATE TABLE p (a INT) WITH ('connector' = 'print', "
                      "'standard-error' = 'true', 'sink.parallelism' = '2')")
    t_env.execute_sql("INSERT INTO p VALUES (1), (2), (3), (4)").wait()
    captured = capfd.readouterr()
    lines = captured.err.splitlines()
    assert "+I[" not in captured.out
    assert sorted(line.split("> ")[1] for line in lines) == [
        "+I[1]", "+I[2]", "+I[3]", "+I[4]"]
    assert {line.split("> ")[0] for line in lines} <= {"1", "2"}


def test_bad_sink_parallelism_is_refused(t_env):
    t_env.execute_sql("CREATE TABLE p (a INT) WITH ('connector' = 'print', "
                      "'sink.parallelism' = '0')")
    with pytest.raises(ValidationError, match="Invalid configured parallelism 0"):
        t_env.execute_sql("INSERT INTO p VALUES (1)")


def test_blackhole_takes_updates_and_prints_nothing(t_env, capfd):
    t_env.execute_sql("CREATE TABLE b (k STRING, c BIGINT) WITH ('connector' = 'blackhole')")
    t_env.execute_sql(f"INSERT INTO b {GROUP_BY}").wait()
    assert capfd.readouterr().out == ""


def test_unknown_print_option_is_named(t_env):
    t_env.execute_sql("CREATE TABLE p (a INT) WITH ('connector' = 'print', 'colour' = 'red')")
    with pytest.raises(ValidationError, match="Unsupported options found for 'print'"):
        t_env.execute_sql("INSERT INTO p VALUES (1)")


def test_source_only_and_sink_only_connectors_say_so(t_env):
    t_env.execute_sql("CREATE TABLE p (a INT) WITH ('connector' = 'print')")
    t_env.execute_sql("CREATE TABLE g (a INT) WITH ('connector' = 'datagen')")
    with pytest.raises(ValidationError, match="Connector 'print' can only be used as a sink"):
        t_env.execute_sql("SELECT * FROM p").collect()
    with pytest.raises(ValidationError, match="Connector 'datagen' can only be used as a "
                                              "source"):
        t_env.execute_sql("INSERT INTO g VALUES (1)")
