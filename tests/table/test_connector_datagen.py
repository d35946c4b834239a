"""The ``datagen`` table connector: Flink's options and errors, the rows it generates (sequence
fields dealt to subtasks as Flink deals them, checked against PyFlink's print output), its
checkpointed position (a restored or rescaled reader goes on exactly where it was), and its
rate per subtask on a manual clock."""

import datetime
import decimal

import pytest

from flintlock.common.types import Row, RowKind
from flintlock.table import DataTypes, EnvironmentSettings, TableEnvironment
from flintlock.table.connectors.datagen import (
    DataGenReader,
    DataGenSource,
    _Splits,
    plan_of,
)
from flintlock.table.errors import ValidationError
from flintlock.table.plan.nodes import Field, TableSpec
from flintlock.testing.clock import ManualClock
from flintlock.testing.executor import use_thread_executor
from tests.table.oracle.cases import load_cases

CASES = load_cases("connectors.txt")  # PyFlink 2.3.0 (tests/table/oracle/connectors.py)


def flink_error(case):
    """The message of the Java exception PyFlink raised for an oracle case."""
    lines = CASES[case].splitlines()
    assert lines[0].startswith("ERROR"), CASES[case]
    text = "\n".join(line[3:] for line in lines[1:])
    return text.split("Exception: ", 1)[1]


@pytest.fixture
def t_env(monkeypatch):
    use_thread_executor(monkeypatch)
    env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    env.get_config().set("parallelism.default", "2")
    return env


def spec(columns, **options):
    fields = tuple(Field(name, data_type) for name, data_type in columns)
    return TableSpec(("g",), fields, {"connector": "datagen", **options})


def reader_of(table_spec, parallelism=1, subtasks=None, clock=None):
    plan = plan_of(table_spec)
    reader = DataGenReader(plan, parallelism, clock or ManualClock())
    splits = _Splits(plan.total_rows, parallelism).initial()
    reader.add_splits([s for s in splits if subtasks is None or int(s.split_id) in subtasks])
    reader.notify_no_more_splits()
    return reader


def drain(reader, batch=3):
    rows = []
    while True:
        records, finished = reader.poll(batch)
        rows.extend(records)
        if finished:
            return rows


def test_sequence_rows_per_subtask_print_as_flink_prints_them(t_env, capfd):
    t_env.execute_sql(
        "CREATE TABLE g (id BIGINT, s STRING) WITH ('connector' = 'datagen', "
        "'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '7', "
        "'fields.s.kind' = 'sequence', 'fields.s.start' = '11', 'fields.s.end' = '17')")
    t_env.execute_sql("CREATE TABLE p (id BIGINT, s STRING) WITH ('connector' = 'print')")
    t_env.execute_sql("INSERT INTO p SELECT * FROM g").wait()
    lines = capfd.readouterr().out.splitlines()
    flink = CASES["datagen sequence p2 print"].splitlines()
    for subtask in ("1>", "2>"):  # each subtask's lines in order; subtasks interleave freely
        assert [x for x in lines if x.startswith(subtask)] == [
            x for x in flink if x.startswith(subtask)]


def test_number_of_rows_smaller_than_the_sequence_ends_it(t_env):
    t_env.execute_sql(
        "CREATE TABLE g (id INT) WITH ('connector' = 'datagen', 'fields.id.kind' = "
        "'sequence', 'fields.id.start' = '1', 'fields.id.end' = '100', 'number-of-rows' = '3')")
    with t_env.execute_sql("SELECT * FROM g").collect() as rows:
        assert sorted(row[0] for row in rows) == [1, 2, 3]


def test_random_fields_respect_their_options(t_env):
    t_env.execute_sql(
        "CREATE TABLE g (a INT, b STRING, c VARCHAR(10), d CHAR(3), e ARRAY<INT>, "
        "f MAP<STRING, INT>, r ROW<x INT, y STRING>, n BIGINT, ts TIMESTAMP(3), "
        "dt DATE, m DECIMAL(5, 2)) WITH ('connector' = 'datagen', 'number-of-rows' = '20', "
        "'fields.a.min' = '5', 'fields.a.max' = '6', 'fields.b.length' = '4', "
        "'fields.e.length' = '2', 'fields.f.length' = '1', 'fields.r.x.min' = '4', "
        "'fields.r.x.max' = '4', 'fields.n.null-rate' = '1.0', 'fields.ts.max-past' = '1 h', "
        "'fields.m.min' = '-1.5', 'fields.m.max' = '2')")
    with t_env.execute_sql("SELECT * FROM g").collect() as results:
        rows = list(results)
    assert len(rows) == 20
    now = datetime.datetime.now(datetime.UTC).replace(tzinfo=None)
    for a, b, c, d, e, f, r, n, ts, dt, m in rows:
        assert a in (5, 6) and n is None
        assert len(b) == 4 and int(b, 16) >= 0  # hex digits, as Flink's
        assert len(c) == 10 and len(d) == 3  # the declared length is the default
        assert len(e) == 2 and len(f) == 1 and r[0] == 4 and len(r[1]) == 100
        assert now - datetime.timedelta(hours=1, seconds=5) <= ts <= now
        assert dt == datetime.date.today()
        assert decimal.Decimal("-1.5") <= m <= 2 and m.as_tuple().exponent == -2


@pytest.mark.parametrize(("case", "data_type", "options"), [
    ("datagen unknown option", DataTypes.INT(), {"fields.a.kind": "random",
                                                 "fields.a.bogus": "1"}),
    ("datagen sequence without end", DataTypes.INT(), {"fields.a.kind": "sequence",
                                                        "fields.a.start": "1"}),
    ("datagen bad kind", DataTypes.INT(), {"fields.a.kind": "other"}),
    ("datagen random varchar too long", DataTypes.VARCHAR(10), {"fields.a.length": "20"}),
])
def test_bad_options_get_flinks_errors(case, data_type, options):
    with pytest.raises(ValidationError) as error:
        plan_of(spec([("a", data_type)], **options))
    flink = flink_error(case)
    # Flink lists the supported options of the field's generator only; flintlock all of them
    assert str(error.value).split("\n\nSupported options")[0] == flink.split(
        "\n\nSupported options")[0]


def test_unparsable_rate_is_named():
    with pytest.raises(ValidationError, match="Could not parse value 'fast' for key"):
        plan_of(spec([("a", DataTypes.INT())], **{"rows-per-second": "fast"}))


def test_sequence_on_a_type_without_one_names_its_options():
    with pytest.raises(ValidationError) as error:
        plan_of(spec([("a", DataTypes.DATE())], **{
            "fields.a.kind": "sequence", "fields.a.start": "1", "fields.a.end": "3"}))
    assert str(error.value).split("\n\nSupported options")[0] == flink_error(
        "datagen sequence on date").split("\n\nSupported options")[0]


def test_sequence_values_take_the_columns_types():
    table = spec([("i", DataTypes.TINYINT()), ("d", DataTypes.DOUBLE()),
                  ("m", DataTypes.DECIMAL(6, 2)), ("s", DataTypes.STRING())],
                 **{f"fields.{c}.{k}": v for c in "idms"
                    for k, v in (("kind", "sequence"), ("start", "8"), ("end", "9"))})
    rows = drain(reader_of(table))
    assert [list(r) for r in rows] == [[8, 8.0, decimal.Decimal("8.00"), "8"],
                                       [9, 9.0, decimal.Decimal("9.00"), "9"]]
    assert all(type(r) is Row and r.get_row_kind() is RowKind.INSERT for r in rows)


def test_a_restored_reader_goes_on_with_the_same_rows():
    table = spec([("id", DataTypes.BIGINT()), ("x", DataTypes.DOUBLE()),
                  ("s", DataTypes.STRING())], **{
        "fields.id.kind": "sequence", "fields.id.start": "1", "fields.id.end": "40"})
    reference = [list(r) for r in drain(reader_of(table, 2, subtasks={0}), batch=4)]
    first = reader_of(table, 2, subtasks={0})
    head = first.poll(7)[0]
    state = first.snapshot_state(1)
    restored = DataGenReader(plan_of(table), 2, ManualClock())
    restored.restore(state)
    restored.notify_no_more_splits()
    tail = drain(restored, batch=5)
    assert [list(r) for r in head + tail] == reference
    assert [r[0] for r in reference] == list(range(1, 41, 2))


def test_a_rescaled_restore_emits_every_remaining_row_once():
    table = spec([("id", DataTypes.INT())], **{
        "fields.id.kind": "sequence", "fields.id.start": "0", "fields.id.end": "99"})
    readers = [reader_of(table, 2, subtasks={i}) for i in (0, 1)]
    emitted = [r[0] for reader in readers for r in reader.poll(10)[0]]
    states = [entry for reader in readers for entry in reader.snapshot_state(1)]
    single = DataGenReader(plan_of(table), 1, ManualClock())
    single.restore(states)
    single.notify_no_more_splits()
    emitted += [r[0] for r in drain(single, batch=17)]
    assert sorted(emitted) == list(range(100))


def test_rows_per_second_is_shared_by_the_subtasks():
    clock = ManualClock()
    table = spec([("id", DataTypes.INT())], **{"rows-per-second": "10", "number-of-rows": "40"})
    reader = reader_of(table, 2, subtasks={0}, clock=clock)
    assert len(reader.poll(100)[0]) == 5
    assert reader.poll(100) == ([], False)
    clock.advance(1000)
    assert len(reader.poll(100)[0]) == 5


def test_an_unbounded_source_without_sequences():
    table = spec([("a", DataTypes.INT())])
    assert not DataGenSource(plan_of(table)).is_bounded()
    reader = reader_of(table)
    assert len(reader.poll(1000)[0]) == 1000


def test_an_unbounded_datagen_table_is_refused_in_batch_mode(monkeypatch):
    use_thread_executor(monkeypatch)
    batch = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
    batch.execute_sql("CREATE TABLE g (a INT) WITH ('connector' = 'datagen')")
    with pytest.raises(ValidationError, match=r"Querying an unbounded table "
                       r"'default_catalog\.default_database\.g' in batch mode is not allowed"):
        batch.execute_sql("SELECT * FROM g").collect()
    batch.execute_sql("CREATE TABLE n (a INT) WITH ('connector' = 'datagen', "
                      "'number-of-rows' = '3')")
    with batch.execute_sql("SELECT * FROM n").collect() as rows:
        assert len(list(rows)) == 3
