"""The deprecated TableSchema against PyFlink 2.3.0 (tests/table/fixtures/misc.txt, from
tests/table/oracle/misc.py)."""

from __future__ import annotations

import pytest

from flintlock.table.errors import ValidationError
from flintlock.table.table_schema import TableSchema
from flintlock.table.types import DataTypes
from tests.table.oracle.cases import load_cases

CASES = load_cases("misc.txt")


def _printed(name: str) -> str:
    return CASES[name].removesuffix("|\n")


def test_builder_and_repr() -> None:
    schema = TableSchema.builder().field("a", DataTypes.BIGINT()).field(
        "b", DataTypes.STRING(False)).build()
    assert repr(schema) == _printed("table_schema builder")


def test_a_tables_schema_and_its_fields() -> None:
    schema = TableSchema(["x", "y", "z"], [DataTypes.BIGINT(), DataTypes.STRING(),
                                           DataTypes.DOUBLE()])
    assert repr(schema) == _printed("get_schema")
    line = CASES["get_schema fields"].rstrip("\n")
    assert line == (f"{schema.get_field_names()} "
                    f"{[repr(kind) for kind in schema.get_field_data_types()]} "
                    f"{schema.to_row_data_type()!r}")
    assert schema.get_field_data_type("y") == DataTypes.STRING()
    assert schema.get_field_data_type(5) is None and schema.get_field_name(1) == "y"
    assert schema.copy() == schema and schema.get_field_count() == 3


def test_bad_schemas_are_refused() -> None:
    with pytest.raises(ValidationError, match="Duplicate fields"):
        TableSchema(["a", "a"], [DataTypes.INT(), DataTypes.INT()])
    with pytest.raises(ValidationError, match="2 field names for 1 data types"):
        TableSchema(["a", "b"], [DataTypes.INT()])
    with pytest.raises(TypeError):
        TableSchema(["a"], [DataTypes.INT()]).get_field_data_type(1.5)  # type: ignore[arg-type]
