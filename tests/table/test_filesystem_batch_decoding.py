"""The filesystem source's batch decoding (issue 33): csv's column-wise batch reader reads what
its per-line reader reads (values, NULLs, skipped lines, errors), a column nobody reads is not
converted, a Calc over a filesystem table runs inside the source (csv, partitioned, canal-json),
and the decoding reader's checkpointed position neither repeats nor skips a line."""

from __future__ import annotations

import datetime
from typing import Any

import pytest

from flintlock.common.operator_spec import OperatorKind
from flintlock.common.types import RowKind
from flintlock.datastream.connectors._file_source import FileSplit
from flintlock.table import EnvironmentSettings, TableEnvironment
from flintlock.table import types as t
from flintlock.table.codegen.compiler import compile_column_calc
from flintlock.table.connectors._file_rows import (
    Decoding,
    RowLineReader,
    calc_columns,
)
from flintlock.table.connectors._options import Options
from flintlock.table.formats import FormatParseError, lookup
from flintlock.table.formats._columns import transpose
from flintlock.table.plan.nodes import Field
from flintlock.table.plan.rex import Call, InputRef, Literal
from flintlock.testing.executor import use_thread_executor
from tests.table.test_calc_fusion import graphs, kinds

FIELDS = [Field("a", t.BigIntType()), Field("s", t.VarCharType(2147483647)),
          Field("ts", t.TimestampType(3)), Field("b", t.BooleanType()),
          Field("d", t.DecimalType(5, 2))]
CSV = lookup("csv")


def both(lines: list[str], options: dict[str, str] | None = None,
         wanted: set[int] | None = None) -> tuple[Any, Any]:
    """(the batch reader's columns, the per-line reader's rows as columns)."""
    opts = Options(options or {})
    batch = CSV.batch_reader(FIELDS, opts, "csv", wanted)(lines)
    rows = [v for v in map(CSV.reader(FIELDS, opts, "csv"), lines) if v is not None]
    return batch, (transpose(rows, len(FIELDS), wanted), len(rows))


@pytest.mark.parametrize("lines, options", [
    (["1,x,2020-01-02 03:04:05.123,true,1.5", "-7,y z,2020-01-02T03:04:05,false,2"], {}),
    (["1,x,2020-1-2 3:04,TRUE,1.5", "2,,2020-01-02 03:04:05.1234567,no,0.005"], {}),
    (['1,"a,b",2020-01-02 03:04:05,true,1', '2,"say ""hi""",2020-01-02 03:04:05,true,1'], {}),
    (["1,x,2020-01-02 03:04:05,true,1", "", "2,y,2020-01-02 03:04:05,true,1"], {}),
    (["# note", "1,x,2020-01-02 03:04:05,true,1"], {"csv.allow-comments": "true"}),
    (["1,N,2020-01-02 03:04:05,true,N", "N,y,N,N,1"], {"csv.null-literal": "N"}),
    (["1;x;2020-01-02 03:04:05;true;1", " 2 ;y;2020-01-02 03:04:05;true;1"],
     {"csv.field-delimiter": ";"}),
    (["1,x,2020-01-02 03:04:05,true,1", "2,y", "zz,y,2020-01-02 03:04:05,true,1",
      "3,y,2020-01-02 03:04:05,true,1000"], {"csv.ignore-parse-errors": "true"}),
])
def test_the_batch_reader_reads_what_the_line_reader_reads(lines: list[str],
                                                           options: dict[str, str]) -> None:
    batch, per_line = both(lines, options)
    assert batch == per_line
    assert batch[1] > 0


def test_plain_batches_take_the_column_path_with_the_same_values() -> None:
    lines = [f"{i},s{i},2015-07-15 00:00:0{i % 10}.{i:03d},{i % 2 == 0},{i}.25"
             for i in range(50)]
    (columns, count), _ = both(lines)
    assert count == 50
    assert columns[0] == list(range(50))
    assert columns[2][7] == datetime.datetime(2015, 7, 15, 0, 0, 7, 7000)
    assert both(lines)[0] == both(lines)[1]


JSON = lookup("json")


@pytest.mark.parametrize("lines, options", [
    (['{"a":1,"s":"x","ts":"2020-01-02 03:04:05.123","b":true,"d":1.5}',
      '{"a":"7","s":5,"ts":"2020-01-02 03:04:05","b":"TRUE","d":"2"}'], {}),
    (['{"a":1}', "", '{"s":"y","extra":[1]}', "  "], {}),
    (['{"a":1}', 'not json', '{"a":2}', '[1]', '{"a":true}'],
     {"json.ignore-parse-errors": "true"}),
    (['{"a":1,"s":null}', '{"a":null,"s":"x"}'], {}),
    (['{"a":1}{"a":2}', '{"a":3}'], {"json.ignore-parse-errors": "true"}),
])
def test_the_json_batch_reader_reads_what_the_line_reader_reads(
        lines: list[str], options: dict[str, str]) -> None:
    opts = Options(options)
    batch = JSON.batch_reader(FIELDS, opts, "json")(lines)
    rows = [v for v in map(JSON.reader(FIELDS, opts, "json"), lines) if v is not None]
    assert batch == (transpose(rows, len(FIELDS), None), len(rows))


def test_json_errors_and_missing_fields_are_the_line_readers() -> None:
    strict = JSON.batch_reader(FIELDS, Options({"json.fail-on-missing-field": "true"}), "json")
    with pytest.raises(FormatParseError, match="Failed to deserialize JSON"):
        strict(['{"a":1,"s":"x","ts":"2020-01-02 03:04:05","b":true,"d":1}', '{"a":2}'])
    with pytest.raises(FormatParseError, match="Failed to deserialize JSON '\\{\"a\":\"x"):
        JSON.batch_reader(FIELDS, Options({}), "json")(['{"a":1}', '{"a":"x"}'])
    columns, count = JSON.batch_reader(FIELDS, Options({}), "json", {1})(
        ['{"a":"not a number","s":"kept"}'])
    assert (columns, count) == ([None, ["kept"], None, None, None], 1)


def test_a_bad_value_raises_the_line_readers_error() -> None:
    lines = ["1,x,2020-01-02 03:04:05,true,1", "x,y,2020-01-02 03:04:05,true,1"]
    with pytest.raises(FormatParseError, match="Failed to deserialize CSV row 'x,y,"):
        CSV.batch_reader(FIELDS, Options({}), "csv")(lines)
    with pytest.raises(FormatParseError, match="Failed to deserialize CSV row '1,x'"):
        CSV.batch_reader(FIELDS, Options({}), "csv")(["1,x"])


def test_a_column_nobody_reads_is_not_converted() -> None:
    lines = ["1,x,not a time,true,1", "2,y,2020-01-02 03:04:05,true,1"]
    columns, count = CSV.batch_reader(FIELDS, Options({}), "csv", {0, 1})(lines)
    assert (columns, count) == ([[1, 2], ["x", "y"], None, None, None], 2)


def test_calc_columns_are_the_columns_the_compiled_calc_reads() -> None:
    big = t.BigIntType()
    calc = compile_column_calc([InputRef(big, 3)], Call(
        t.BooleanType(), ">", (InputRef(big, 1), Literal(big, 0))))
    assert calc_columns(calc) == {1, 3}
    assert calc_columns(None) is None


@pytest.fixture
def t_env(monkeypatch: pytest.MonkeyPatch) -> Any:
    use_thread_executor(monkeypatch)
    env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    env.get_config().set("parallelism.default", "2")
    return env


def _rows(env: Any, query: str) -> list[tuple[Any, ...]]:
    with env.execute_sql(query).collect() as rows:
        return sorted((str(row.get_row_kind()), *row) for row in rows)


def test_a_calc_over_a_csv_table_runs_in_the_source(t_env: Any, monkeypatch: Any,
                                                    tmp_path: Any) -> None:
    (tmp_path / "a.csv").write_text("".join(f"{i},n{i},{i * 3}\n" for i in range(40)))
    (tmp_path / "b.csv").write_text('40,"q,r",1\n41,,2\n')
    t_env.execute_sql(f"CREATE TABLE f (id BIGINT, name STRING, v INT) WITH ("
                      f"'connector' = 'filesystem', 'path' = '{tmp_path}', 'format' = 'csv')")
    captured = graphs(monkeypatch)
    got = _rows(t_env, "SELECT v + 1, name FROM f WHERE MOD(id, 7) = 6")
    assert got == sorted([("+I", i * 3 + 1, f"n{i}") for i in (6, 13, 20, 27, 34)]
                         + [("+I", 3, "")])
    assert not {OperatorKind.MAP, OperatorKind.FLAT_MAP, OperatorKind.FILTER} & set(
        kinds(captured[-1]))
    assert _rows(t_env, "SELECT * FROM f WHERE id >= 40") == [
        ("+I", 40, "q,r", 1), ("+I", 41, "", 2)]


def test_a_calc_over_a_partitioned_table_sees_the_partition_values(t_env: Any,
                                                                   tmp_path: Any) -> None:
    for p in ("a", "b"):
        (tmp_path / f"p={p}").mkdir()
        (tmp_path / f"p={p}" / "part-0").write_text("1,x\n2,y\n")
    t_env.execute_sql(f"CREATE TABLE f (i INT, s STRING, p STRING) PARTITIONED BY (p) WITH ("
                      f"'connector' = 'filesystem', 'path' = '{tmp_path}', 'format' = 'csv')")
    assert _rows(t_env, "SELECT p, i FROM f WHERE s = 'y'") == [("+I", "a", 2), ("+I", "b", 2)]
    assert _rows(t_env, "SELECT * FROM f WHERE p = 'b'") == [("+I", 1, "x", "b"),
                                                              ("+I", 2, "y", "b")]


def test_a_calc_over_a_canal_json_table_keeps_the_row_kinds(t_env: Any, tmp_path: Any
                                                            ) -> None:
    t_env.execute_sql(f"CREATE TABLE t (k STRING, c BIGINT) WITH ('connector' = 'filesystem', "
                      f"'path' = '{tmp_path}', 'format' = 'canal-json')")
    t_env.execute_sql("INSERT INTO t SELECT k, COUNT(*) FROM (VALUES ('a'), ('a'), ('b')) "
                      "AS v(k) GROUP BY k").wait()
    assert _rows(t_env, "SELECT c * 10 AS c10 FROM t WHERE k = 'a'") == [
        ("+I", 10), ("+I", 20), ("-D", 10)]


def test_the_readers_position_neither_repeats_nor_skips_a_line(tmp_path: Any) -> None:
    path = tmp_path / "data.csv"
    path.write_text("".join(f"{i},n{i}\n" for i in range(100)))
    fields = [Field("i", t.BigIntType()), Field("s", t.VarCharType(10))]
    calc = compile_column_calc([InputRef(t.BigIntType(), 0)], Call(
        t.BooleanType(), "=", (Call(t.BigIntType(), "MOD", (
            InputRef(t.BigIntType(), 0), Literal(t.IntType(), 10))), Literal(t.IntType(), 3))))
    read = CSV.batch_reader(fields, Options({}), "csv", calc_columns(calc))
    decoding = Decoding(read, (0, 1), 2, calc=calc)
    got: list[int] = []
    state = [FileSplit(str(path))]
    for _ in range(50):  # a new reader after every poll, restored from the snapshot
        reader = RowLineReader("UTF-8", decoding)
        reader.restore(state)
        reader.notify_no_more_splits()
        records, finished = reader.poll(4)
        got.extend(row[0] for row in records)
        assert all(row.get_row_kind() is RowKind.INSERT for row in records)
        state = reader.snapshot_state(1)
        reader.close()
        if finished:
            break
    assert got == [i for i in range(100) if i % 10 == 3]


def _old_cast_to_decimal(value: Any, precision: int, scale: int) -> Any:
    """The cast as it was written before its fast path (as_tuple digit counting)."""
    import decimal
    number = decimal.Decimal(value)
    result = number.quantize(decimal.Decimal(1).scaleb(-scale), rounding=decimal.ROUND_HALF_UP)
    exponent = int(result.as_tuple().exponent)
    if len(result.as_tuple().digits) - max(0, -exponent) > precision - scale:
        return None
    return result


def test_the_decimal_casts_fast_path_gives_the_digit_counting_result() -> None:
    """q1's ``0.908 * price`` as DECIMAL(23, 3) and the edges of precision and scale."""
    import decimal

    from flintlock.table.codegen.sql_functions import cast_to_decimal
    values = [decimal.Decimal(v) for v in (
        "0", "-0", "0.5", "1.5", "999.995", "999.994", "-999.995", "1E+5", "1E+6", "0.0004",
        "0.0005", "123456789012345678.9995")] + [decimal.Decimal("0.908") * p
                                                 for p in range(0, 3000, 7)]
    def outcome(cast: Any, value: Any, precision: int, scale: int) -> Any:
        try:
            return cast(value, precision, scale)
        except decimal.InvalidOperation:  # more digits than the context's 28: both raise
            return "InvalidOperation"

    for value in values:
        for precision, scale in ((3, 3), (5, 2), (6, 0), (23, 3), (1, 0), (38, 18)):
            assert (outcome(cast_to_decimal, value, precision, scale)
                    == outcome(_old_cast_to_decimal, value, precision, scale)), (
                value, precision, scale)


def test_a_filter_keeping_nothing_reads_on_within_the_polls_time(tmp_path: Any,
                                                                  monkeypatch: Any) -> None:
    """A poll reads budget after budget while the fused filter keeps no row (a poll without
    rows costs the task an idle wait), until the file ends or ``MAX_EMPTY_READ_S`` passes."""
    from flintlock.table.connectors import _file_rows
    path = tmp_path / "data.csv"
    path.write_text("".join(f"{i},n{i}\n" for i in range(100)))
    fields = [Field("i", t.BigIntType()), Field("s", t.VarCharType(10))]
    never = compile_column_calc([InputRef(t.BigIntType(), 0)], Call(
        t.BooleanType(), "<", (InputRef(t.BigIntType(), 0), Literal(t.IntType(), 0))))
    decoding = Decoding(CSV.batch_reader(fields, Options({}), "csv", {0}), (0, 1), 2,
                        calc=never)

    def one_poll() -> tuple[list[Any], bool, Any]:
        reader = RowLineReader("UTF-8", decoding)
        reader.restore([FileSplit(str(path))])
        reader.notify_no_more_splits()
        records, finished = reader.poll(4)
        state = reader.snapshot_state(1)
        reader.close()
        return records, finished, state

    monkeypatch.setattr(_file_rows, "MAX_EMPTY_READ_S", 3600.0)
    assert one_poll()[:2] == ([], True)
    monkeypatch.setattr(_file_rows, "MAX_EMPTY_READ_S", -1.0)  # gives up after one budget
    records, finished, state = one_poll()
    assert (records, finished) == ([], False)
    assert state == [FileSplit(str(path), len("".join(f"{i},n{i}\n" for i in range(4))))]


@pytest.mark.parametrize("lines, options", [
    (["1,x,2020-01-02 03:04:05.123,true,1.5", "-7,y z,2020-01-02T03:04:05,false,2"], {}),
    (["1,N,2020-01-02 03:04:05,true,N", "N,y,N,N,1"], {"csv.null-literal": "N"}),
    ([], {}),
])
def test_rows_without_a_calc_are_the_line_readers_rows_as_inserts(
        lines: list[str], options: dict[str, str]) -> None:
    """``Decoding.rows`` with no Calc builds its rows from the columns at once
    (``rows_from_columns``), constant columns placed, falling back to a transpose for a column
    that is not a list; either way the per-line reader's values, each row an INSERT."""
    opts = Options(options)
    expected = [list(v) for v in map(CSV.reader(FIELDS, opts, "csv"), lines) if v is not None]
    read = CSV.batch_reader(FIELDS, opts, "csv")
    plain = Decoding(read, tuple(range(5)), 5).rows(lines)
    placed = Decoding(read, (0, 1, 2, 3, 4), 6, constants=((5, "p"),)).rows(lines)

    def tupled(got: list[str]) -> Any:
        columns, count = read(got)
        return [tuple(c) for c in columns], count

    fallback = Decoding(tupled, tuple(range(5)), 5).rows(lines)  # type: ignore[arg-type]
    assert [list(r) for r in plain] == [list(r) for r in fallback] == expected
    assert [list(r) for r in placed] == [[*v, "p"] for v in expected]
    assert {r.get_row_kind() for r in [*plain, *placed, *fallback]} <= {RowKind.INSERT}
