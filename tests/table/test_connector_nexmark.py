"""The ``nexmark`` table connector (issue 33) on TaskManager threads: Flink's nexmark schema
and views, the event counts per type, its options and schema checked; and the Nexmark
benchmark's q1 and q2 (``benchmarks/nexmark/queries.py``) against a Python reference over the
same generated events."""

import decimal
from collections import Counter

import pytest

from benchmarks.nexmark.queries import BY_NAME
from flintlock.datastream.connectors.nexmark import NexmarkConfig
from flintlock.datastream.connectors.nexmark.generator import BID, event
from flintlock.table import EnvironmentSettings, TableEnvironment
from flintlock.table.connectors.nexmark import create_statements
from flintlock.table.errors import ValidationError
from flintlock.testing.executor import use_thread_executor

EVENTS = 3000


@pytest.fixture
def t_env(monkeypatch):
    use_thread_executor(monkeypatch)
    env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    env.get_config().set("parallelism.default", "2")
    for statement in create_statements("nexmark", **{"events.num": str(EVENTS)}):
        env.execute_sql(statement)
    return env


def final_rows(result):
    rows = Counter()
    for row in result.collect():
        if str(row.get_row_kind()) in ("+I", "+U"):
            rows[tuple(row)] += 1
        else:
            rows[tuple(row)] -= 1
    return +rows


def bids():
    config = NexmarkConfig(events=EVENTS)
    return [values for kind, values, _ in (event(config, n) for n in range(EVENTS))
            if kind == BID]


def test_events_per_type_through_the_table_and_its_views(t_env):
    counts = final_rows(t_env.execute_sql(
        "SELECT event_type, COUNT(*) FROM nexmark GROUP BY event_type"))
    assert counts == Counter({(0, 60): 1, (1, 180): 1, (2, 2760): 1})
    people = final_rows(t_env.execute_sql("SELECT id, `dateTime` FROM person"))
    assert sorted(row[0] for row in people) == list(range(1000, 1060))
    config = NexmarkConfig(events=EVENTS)
    assert {row[1] for row in people} == {values[6] for kind, values, _ in (
        event(config, n) for n in range(EVENTS)) if kind == 0}


def test_q1_currency_conversion_matches_a_python_reference(t_env):
    got = final_rows(t_env.execute_sql(BY_NAME["q1"].sql))
    expected = Counter((b[0], b[1], decimal.Decimal("0.908") * b[2], b[5], b[6])
                       for b in bids())
    assert got == expected


def test_q2_selection_matches_a_python_reference(t_env):
    got = final_rows(t_env.execute_sql(BY_NAME["q2"].sql))
    expected = Counter((b[0], b[2]) for b in bids() if b[0] % 123 == 0)
    assert got == expected and got


def test_the_schema_and_the_options_are_checked(t_env):
    t_env.execute_sql("CREATE TABLE wrong (event_type INT, person STRING) "
                      "WITH ('connector' = 'nexmark')")
    with pytest.raises(ValidationError, match="must be in the schema of"):
        t_env.execute_sql("SELECT * FROM wrong").collect()
    for statement in create_statements("bad", **{"events.num": "ten"}):
        t_env.execute_sql(statement.replace("VIEW person", "VIEW p2")
                          .replace("VIEW auction", "VIEW a2").replace("VIEW bid", "VIEW b2"))
    with pytest.raises(ValidationError, match=r"events\.num"):
        t_env.execute_sql("SELECT * FROM bad").collect()
    t_env.execute_sql("CREATE TABLE unknown (event_type INT) WITH ('connector' = 'nexmark', "
                      "'events.nom' = '1')")
    with pytest.raises(ValidationError, match="Unsupported options"):
        t_env.execute_sql("SELECT * FROM unknown").collect()


def test_an_unbounded_nexmark_table_is_refused_in_batch_mode(monkeypatch):
    use_thread_executor(monkeypatch)
    env = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
    env.execute_sql(create_statements("nexmark")[0])
    with pytest.raises(ValidationError, match=r"unbounded table '.*nexmark' in batch mode"):
        env.execute_sql("SELECT event_type FROM nexmark").collect()
