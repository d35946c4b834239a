"""flintlock.table.types against PyFlink 2.3.0's own answers (tests/table/fixtures/types_schema.txt,
captured by tests/table/oracle/types_schema.py): type spellings, reprs, inference."""

from __future__ import annotations

import array
import collections
import datetime
import decimal
import re

import pytest

from flintlock.common.typeinfo import Types
from flintlock.common.types import Row, RowKind
from flintlock.table.errors import ValidationError
from flintlock.table.type_parser import DataTypeParseError
from flintlock.table.types import (
    ArrayType,
    BigIntType,
    DataTypes,
    DayTimeIntervalType,
    DecimalType,
    IntType,
    InvalidDataTypeError,
    MapType,
    NullType,
    RowField,
    RowType,
    VarCharType,
    _create_converter,
    _create_type_verifier,
    _infer_schema_from_data,
    _infer_type,
    from_sql_string,
    python_type_info,
    sql_string,
)
from tests.table.oracle.cases import load_cases

CASES = load_cases("types_schema.txt")
COLUMN = re.compile(r"^\(\n  `c` (?P<type>.*)\n\)\n$")


def _ddl_cases() -> list[tuple[str, str]]:
    return [(name[len("ddl_type "):], text) for name, text in CASES.items()
            if name.startswith("ddl_type ")]


@pytest.mark.parametrize(("spelling", "printed"), _ddl_cases())
def test_a_ddl_type_spelling_parses_to_what_flink_prints(spelling: str, printed: str) -> None:
    match = COLUMN.match(printed)
    if match is None:
        assert printed.startswith("ERROR")
        if "REAL" in printed:
            with pytest.raises(DataTypeParseError, match="Type is not supported: REAL"):
                from_sql_string(spelling)
        else:  # Flink refuses INTERVAL columns in a table; the type itself parses (CAST)
            assert spelling.startswith("INTERVAL")
            assert sql_string(from_sql_string(spelling)).startswith("INTERVAL")
        return
    assert sql_string(from_sql_string(spelling)) == match["type"]


FACTORIES = {
    "NULL": DataTypes.NULL(),
    "CHAR(3)": DataTypes.CHAR(3), "VARCHAR(7)": DataTypes.VARCHAR(7),
    "STRING": DataTypes.STRING(), "STRING(False)": DataTypes.STRING(False),
    "BOOLEAN": DataTypes.BOOLEAN(), "BINARY(2)": DataTypes.BINARY(2),
    "VARBINARY(3)": DataTypes.VARBINARY(3), "BYTES": DataTypes.BYTES(),
    "DECIMAL(10,3)": DataTypes.DECIMAL(10, 3), "DECIMAL(38,18)": DataTypes.DECIMAL(38, 18),
    "TINYINT": DataTypes.TINYINT(), "SMALLINT": DataTypes.SMALLINT(), "INT": DataTypes.INT(),
    "BIGINT(False)": DataTypes.BIGINT(False), "FLOAT": DataTypes.FLOAT(),
    "DOUBLE": DataTypes.DOUBLE(), "DATE": DataTypes.DATE(), "TIME": DataTypes.TIME(),
    "TIMESTAMP": DataTypes.TIMESTAMP(), "TIMESTAMP(3)": DataTypes.TIMESTAMP(3),
    "TIMESTAMP_LTZ": DataTypes.TIMESTAMP_LTZ(), "TIMESTAMP_LTZ(3)": DataTypes.TIMESTAMP_LTZ(3),
    "TIMESTAMP_WITH_LOCAL_TIME_ZONE(0)": DataTypes.TIMESTAMP_WITH_LOCAL_TIME_ZONE(0),
    "ARRAY(INT)": DataTypes.ARRAY(DataTypes.INT()),
    "ARRAY(STRING(False))": DataTypes.ARRAY(DataTypes.STRING(False)),
    "MAP(STRING,BIGINT)": DataTypes.MAP(DataTypes.STRING(), DataTypes.BIGINT()),
    "MULTISET(INT)": DataTypes.MULTISET(DataTypes.INT()),
    "ROW": DataTypes.ROW([DataTypes.FIELD("a", DataTypes.INT()),
                          DataTypes.FIELD("b", DataTypes.STRING(), "desc b")]),
    "ROW(False)": DataTypes.ROW([DataTypes.FIELD("a", DataTypes.INT())], False),
    "INTERVAL(DAY)": DataTypes.INTERVAL(DataTypes.DAY()),
    "INTERVAL(SECOND(3))": DataTypes.INTERVAL(DataTypes.SECOND(3)),
    "INTERVAL(YEAR,MONTH)": DataTypes.INTERVAL(DataTypes.YEAR(), DataTypes.MONTH()),
}


@pytest.mark.parametrize("name", sorted(FACTORIES))
def test_a_factory_type_has_pyflinks_str_repr_and_flinks_spelling(name: str) -> None:
    lines = dict(line.split(": ", 1) for line in CASES[f"factory {name}"].splitlines())
    data_type = FACTORIES[name]
    assert str(data_type) == lines["python str"]
    assert repr(data_type) == lines["python repr"]
    assert sql_string(data_type) == lines["java"]


def test_every_factory_of_the_oracle_is_covered() -> None:
    assert {name[len("factory "):] for name in CASES if name.startswith("factory ")} == set(
        FACTORIES)


INFER: dict[str, list[object]] = {
    "int": [(1,)], "float": [(1.5,)], "str": [("a",)], "bool": [(True,)],
    "bytearray": [(bytearray(b"ab"),)], "decimal": [(decimal.Decimal("1.5"),)],
    "date": [(datetime.date(2023, 1, 2),)], "time": [(datetime.time(1, 2, 3),)],
    "datetime": [(datetime.datetime(2023, 1, 2, 3, 4, 5),)],
    "list": [([1, 2],)], "list_str": [(["a"],)], "dict": [({"a": 1},)],
    "row": [(Row(1, "a"),)], "named_row_elements": [Row(x=1, y="a")],
    "tuple_nested": [((1, "a"),)], "two_columns": [(1, "a"), (2, "b")],
    "null_then_int": [(None, "a"), (1, "b")], "list_elements": [[1, "a"]],
    "dict_elements": [{"b": 1, "a": "x"}],
    "bytes": [(b"ab",)], "timedelta": [(datetime.timedelta(seconds=3),)],
    "empty_list": [([],)], "none_only": [(None,)], "int_then_str": [(1,), ("a",)],
    "atomic": [1, 2],
}
SCHEMA_LINE = re.compile(r"^  `(?P<name>[^`]*)` (?P<type>.*?),?$")


@pytest.mark.parametrize("name", sorted(INFER))
def test_inference_is_pyflinks(name: str) -> None:
    text = CASES[f"infer {name}"]
    first, _, rest = text.partition("\n")
    if first.startswith("python ERROR "):
        kind, message = first[len("python ERROR "):].split(" ", 1)
        with pytest.raises(Exception) as raised:
            _infer_schema_from_data(INFER[name])
        assert type(raised.value).__name__ == kind
        assert str(raised.value) == message.replace("pyflink.table.types", "flintlock.table.types")
        return
    schema = _infer_schema_from_data(INFER[name])
    assert "python: " + repr(schema) == first
    printed = [SCHEMA_LINE.match(line) for line in rest.splitlines()[1:-1]]
    assert [(m["name"], m["type"]) for m in printed if m] == [
        (field.name, sql_string(field.data_type)) for field in schema]


def test_every_inference_case_of_the_oracle_is_covered() -> None:
    assert {name[len("infer "):] for name in CASES if name.startswith("infer ")} == set(INFER)


def test_inference_of_names_given_and_namedtuples() -> None:
    schema = _infer_schema_from_data([(1, "a", 2.0)], ["x", "y"])
    assert schema.field_names() == ["x", "y", "_3"]
    point = collections.namedtuple("point", ["px", "py"])
    assert _infer_schema_from_data([point(1, 2.5)]).field_names() == ["px", "py"]
    assert _infer_type(array.array("i", [1])) == ArrayType(IntType(False))
    assert _infer_type([None, 1]) == ArrayType(NullType())  # PyFlink looks at obj[0]
    assert _infer_type({None: 1, "k": 2}) == MapType(VarCharType(0x7FFFFFFF, False), BigIntType())


def test_a_converter_turns_inferred_elements_into_plain_tuples() -> None:
    schema = _infer_schema_from_data([{"b": 1, "a": "x"}])
    assert _create_converter(schema)({"b": 1, "a": "x"}) == ("x", 1)
    nested = _infer_schema_from_data([(Row(1, "a"),)])
    assert _create_converter(nested)((Row(1, "a"),)) == ((1, "a"),)


def test_the_verifier_raises_pyflinks_errors() -> None:
    schema = DataTypes.ROW([DataTypes.FIELD("a", DataTypes.TINYINT()),
                            DataTypes.FIELD("b", DataTypes.STRING(False))])
    verify = _create_type_verifier(schema)
    verify((1, "x"))
    verify(Row(a=1, b="x"))
    with pytest.raises(ValueError, match="field a: object of TinyIntType out of range, got: 300"):
        verify((300, "x"))
    with pytest.raises(ValueError, match="field b: This field is not nullable, but got None"):
        verify((1, None))
    with pytest.raises(TypeError, match="field a: TINYINT can not accept object 'x'"):
        verify(("x", "y"))
    with pytest.raises(ValueError, match=r"Length of object \(3\) does not match with length "
                                         r"of fields \(2\)"):
        verify((1, "a", 2))
    with pytest.raises(ValueError, match="VarCharType exceeds: 2"):
        _create_type_verifier(DataTypes.VARCHAR(2))("abc")


def test_types_compare_by_value_and_copy_on_nullability_change() -> None:
    assert DataTypes.INT() == IntType()
    assert DataTypes.INT() != DataTypes.INT(False)
    assert DataTypes.INT().not_null() == DataTypes.INT(False)
    original = DataTypes.STRING()
    assert original.not_null()._nullable is False and original._nullable is True
    row = DataTypes.ROW([DataTypes.FIELD("a", DataTypes.INT())])
    assert row["a"] == RowField("a", IntType()) and row[0].name == "a"
    assert row.add("b", "STRING").field_names() == ["a", "b"]
    assert row.field_types()[1] == DataTypes.STRING()
    assert DataTypes.ROW([]) == RowType() and RowType().names == []


def test_bad_parameters_raise_a_typed_error() -> None:
    with pytest.raises(InvalidDataTypeError, match="precision must be between 1 and 38"):
        DataTypes.DECIMAL(40, 2)
    with pytest.raises(InvalidDataTypeError, match="scale"):
        DecimalType(5, 6)
    with pytest.raises(InvalidDataTypeError, match="TIMESTAMP precision"):
        DataTypes.TIMESTAMP(10)
    with pytest.raises(ValidationError):
        DataTypes.ARRAY("INT")  # type: ignore[arg-type]
    with pytest.raises(InvalidDataTypeError, match="Unsupported interval"):
        DataTypes.INTERVAL(DataTypes.SECOND(), DataTypes.DAY())


@pytest.mark.parametrize(("text", "position", "reason"), [
    ("FOO", 0, "unknown type 'FOO'"),
    ("INT(", 3, "unexpected text after the type"),
    ("ARRAY<INT", 9, "expected '>'"),
    ("DECIMAL(40, 2)", 14, "out of range"),
    ("VARCHAR(0)", 10, "length must be between 1"),
    ("ROW<a>", 5, "expected a type"),
    ("INT @", 4, "unexpected character '@'"),
])
def test_a_bad_type_string_names_position_and_reason(text: str, position: int,
                                                     reason: str) -> None:
    with pytest.raises(DataTypeParseError) as raised:
        from_sql_string(text)
    assert raised.value.position == position
    assert reason in str(raised.value)


def test_parsed_details_keep_descriptions_quotes_and_case() -> None:
    row = from_sql_string("row<`a``b` int 'it''s', C varchar(3) not null>")
    assert isinstance(row, RowType)
    assert row.field_names() == ["a`b", "C"]
    assert row[0].description == "it's"
    assert sql_string(row) == "ROW<`a``b` INT, `C` VARCHAR(3) NOT NULL>"
    assert sql_string(from_sql_string("INT NOT NULL ARRAY NOT NULL")) == (
        "ARRAY<INT NOT NULL> NOT NULL")
    interval = from_sql_string("INTERVAL HOUR TO SECOND(3)")
    assert isinstance(interval, DayTimeIntervalType)
    assert (interval.fractional_precision, sql_string(interval)) == (
        3, "INTERVAL HOUR TO SECOND(3)")


def test_python_type_info_maps_to_datastream_types() -> None:
    row = from_sql_string("ROW<a INT, b ARRAY<STRING>, c MAP<STRING, BIGINT>, "
                          "d DECIMAL(10, 2), e BYTES, f TIMESTAMP(3), g MULTISET<STRING>>")
    assert repr(python_type_info(row)) == repr(Types.ROW_NAMED(
        ["a", "b", "c", "d", "e", "f", "g"],
        [Types.INT(), Types.BASIC_ARRAY(Types.STRING()), Types.MAP(Types.STRING(), Types.LONG()),
         Types.BIG_DEC(), Types.PRIMITIVE_ARRAY(Types.BYTE()), Types.SQL_TIMESTAMP(),
         Types.MAP(Types.STRING(), Types.INT())]))
    assert repr(python_type_info(DataTypes.ARRAY(DataTypes.ROW([])))) == (
        "Types.OBJECT_ARRAY(Types.ROW([]))")


def test_sql_conversions_round_trip() -> None:
    row_type = DataTypes.ROW([DataTypes.FIELD("d", DataTypes.DATE()),
                              DataTypes.FIELD("t", DataTypes.TIME()),
                              DataTypes.FIELD("ts", DataTypes.TIMESTAMP(3)),
                              DataTypes.FIELD("a", DataTypes.ARRAY(DataTypes.DATE()))])
    value = Row(datetime.date(2023, 1, 2), datetime.time(10, 0, 1),
                datetime.datetime(2023, 1, 2, 3, 4, 5, 6000), [datetime.date(1970, 1, 2)])
    internal = row_type.to_sql_type(value)
    assert internal[0] == RowKind.INSERT.value and internal[1] == 19359 and internal[4] == [1]
    back = row_type.from_sql_type(internal[1:])
    assert list(back) == list(value) and back.get_field_names() == ["d", "t", "ts", "a"]


@pytest.mark.parametrize(("text", "value"), [
    ("TINYINT", 1), ("BIGINT", 2 ** 40), ("DOUBLE", 1.5),
    ("DECIMAL(10, 2)", decimal.Decimal("1.5")),
    ("STRING", "a"), ("CHAR(3)", "abc"), ("BYTES", b"\x01"), ("BOOLEAN", True),
    ("DATE", datetime.date(2023, 1, 2)), ("TIME", datetime.time(10)),
    ("TIMESTAMP(3)", datetime.datetime(2023, 1, 2)),
    ("TIMESTAMP_LTZ(3)", datetime.datetime(2023, 1, 2)),
    ("ARRAY<INT>", [1, None]), ("ARRAY<ROW<a INT>>", [Row(1)]), ("MAP<STRING, INT>", {"a": None}),
    ("MULTISET<STRING>", {"a": 2}), ("ROW<a INT, b STRING>", Row(1, None)),
    ("INTERVAL DAY", datetime.timedelta(days=1)),
])
def test_python_type_info_accepts_the_table_layers_values(text: str, value: object) -> None:
    python_type_info(from_sql_string(text)).validate(value, "test")
