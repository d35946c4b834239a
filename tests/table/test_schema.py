"""Schema / Schema.Builder text and the resolved schema's print_schema text against PyFlink
2.3.0 (tests/table/fixtures/types_schema.txt, from tests/table/oracle/types_schema.py)."""

from __future__ import annotations

import pytest

from flintlock.table.errors import ValidationError
from flintlock.table.resolved_schema import (
    Column,
    ComputedColumn,
    MetadataColumn,
    PhysicalColumn,
    ResolvedSchema,
    TimeAttribute,
    UniqueConstraint,
    WatermarkSpec,
)
from flintlock.table.schema import Schema, SchemaError, UnresolvedComputedColumn
from flintlock.table.types import DataTypes, from_sql_string
from tests.table.oracle.cases import load_cases

CASES = load_cases("types_schema.txt")


class FakeExpression:
    """Stands in for a Table API Expression: the schema prints an object as its str."""

    def __init__(self, text: str) -> None:
        self.text = text

    def __str__(self) -> str:
        return self.text


def printed(name: str) -> str:
    return CASES[name].removesuffix("\n")


def test_empty_schema() -> None:
    assert str(Schema.new_builder().build()) == printed("schema empty")


def test_physical_columns_with_a_type_string_in_brackets() -> None:
    schema = (Schema.new_builder().column("a", DataTypes.BIGINT())
              .column("b", DataTypes.STRING()).column("c", "DECIMAL(10, 2)").build())
    assert str(schema) == printed("schema physical")


def test_every_kind_of_member() -> None:
    schema = (Schema.new_builder()
              .column("id", DataTypes.BIGINT().not_null())
              .column("name", "STRING")
              .column("ts", DataTypes.TIMESTAMP(3))
              .column_by_expression("total", "id * 2")
              .column_by_expression("expr_obj", FakeExpression("plus(id, 1)"))
              .column_by_metadata("part", DataTypes.INT(), "partition", True)
              .column_by_metadata("offset", DataTypes.BIGINT())
              .column_by_metadata("k", "STRING", "key")
              .watermark("ts", "ts - INTERVAL '5' SECOND")
              .primary_key("id").build())
    assert str(schema) == printed("schema full")
    assert schema.get_columns()[3] == UnresolvedComputedColumn("total", "id * 2")
    assert schema.get_primary_key() is not None
    assert schema.get_primary_key().column_names == ("id",)


def test_primary_keys_named_and_generated() -> None:
    base = Schema.new_builder().column("a", DataTypes.INT().not_null()).column(
        "b", DataTypes.INT().not_null())
    assert str(base.primary_key_named("my_pk", "a", "b").build()) == printed("schema pk named")
    again = Schema.new_builder().column("a", DataTypes.INT().not_null()).column(
        "b", DataTypes.INT().not_null())
    assert str(again.primary_key("a", "b").build()) == printed("schema pk two")


def test_from_row_data_type_fields_and_schema() -> None:
    row = DataTypes.ROW([DataTypes.FIELD("a", DataTypes.INT()),
                         DataTypes.FIELD("b", DataTypes.STRING())])
    assert str(Schema.new_builder().from_row_data_type(row).build()) == printed(
        "schema from_row_data_type")
    assert str(Schema.new_builder().from_fields(["a", "b"], [DataTypes.INT(),
                                                              DataTypes.STRING()]).build()) == (
        printed("schema from_fields"))
    base = Schema.new_builder().column("a", DataTypes.INT()).build()
    assert str(Schema.new_builder().from_schema(base).column("b", DataTypes.STRING()).build()) == (
        printed("schema from_schema"))


def test_watermarks_with_an_expression_object_or_text() -> None:
    schema = Schema.new_builder().column("ts", DataTypes.TIMESTAMP(3)).watermark(
        "ts", FakeExpression("ts")).build()
    assert str(schema) == printed("schema watermark expr obj")
    schema = Schema.new_builder().column("ts", "TIMESTAMP_LTZ(3)").watermark("ts", "ts").build()
    assert str(schema) == printed("schema comment-less wm str")


def test_schemas_compare_by_members() -> None:
    one = Schema.new_builder().column("a", DataTypes.INT()).build()
    two = Schema.new_builder().column("a", DataTypes.INT()).build()
    assert one == two and hash(one) == hash(two)
    assert one != Schema.new_builder().column("a", DataTypes.BIGINT()).build()


def test_bad_builder_input_raises_schema_errors() -> None:
    with pytest.raises(SchemaError, match="Multiple primary keys"):
        Schema.new_builder().column("a", DataTypes.INT()).primary_key("a").primary_key("a")
    with pytest.raises(SchemaError, match="at least a single column"):
        Schema.new_builder().primary_key()
    with pytest.raises(SchemaError, match="a ROW data type is needed"):
        Schema.new_builder().from_row_data_type(DataTypes.INT())
    with pytest.raises(SchemaError, match="2 field names for 1 data types"):
        Schema.new_builder().from_fields(["a", "b"], [DataTypes.INT()])
    with pytest.raises(SchemaError, match="DataType or a type string"):
        Schema.new_builder().column("a", 3)  # type: ignore[arg-type]
    with pytest.raises(ValidationError):
        Schema.new_builder().column(1, DataTypes.INT())  # type: ignore[arg-type]


def rich_schema() -> ResolvedSchema:
    """The ``rich`` table of the oracle's DDL, as the binder would resolve it."""
    ts3 = DataTypes.TIMESTAMP(3)
    return ResolvedSchema(
        (PhysicalColumn("id", DataTypes.BIGINT(False)),
         PhysicalColumn("name", DataTypes.STRING(), comment="the name"),
         PhysicalColumn("price", DataTypes.DECIMAL(10, 2)),
         PhysicalColumn("ts", ts3, time_attribute=TimeAttribute.ROWTIME),
         Column.computed("total", DataTypes.DECIMAL(21, 2), None, "`price` * 2"),
         MetadataColumn("part", DataTypes.INT(), "partition", True),
         Column.metadata("ts2", DataTypes.TIMESTAMP_LTZ(3), "timestamp"),
         Column.physical("tags", from_sql_string("ARRAY<STRING>"))),
        (WatermarkSpec.of("ts", None, "`ts` - INTERVAL '5' SECOND", ts3),),
        UniqueConstraint.primary_key("PK_id", ["id"]))


def test_print_schema_of_a_rich_table() -> None:
    assert str(rich_schema()) == printed("print_schema rich")


def test_print_schema_with_proctime_and_a_two_column_key() -> None:
    schema = ResolvedSchema(
        (PhysicalColumn("id", DataTypes.BIGINT(False)),
         PhysicalColumn("k", DataTypes.STRING(False)),
         PhysicalColumn("name", DataTypes.STRING(), comment="the name"),
         PhysicalColumn("ts", DataTypes.TIMESTAMP(3), time_attribute=TimeAttribute.ROWTIME),
         ComputedColumn("proc", DataTypes.TIMESTAMP_LTZ(3, False), None, "PROCTIME()",
                        time_attribute=TimeAttribute.PROCTIME)),
        (WatermarkSpec.of("ts", None, "`ts` - INTERVAL '5' SECOND", DataTypes.TIMESTAMP(3)),),
        UniqueConstraint.primary_key("PK_id_k", ["id", "k"]))
    assert str(schema) == printed("print_schema rich2")
    assert schema.get_primary_key_indexes() == [0, 1]


@pytest.mark.parametrize(("case", "names", "types"), [
    ("print_schema unicode", ["中文", "a b"], ["INT", "STRING"]),
    ("print_schema empty_values", ["x"], ["INT NOT NULL"]),
    ("from_elements names", ["x", "y", "_3"], ["BIGINT", "STRING", "DOUBLE"]),
])
def test_print_schema_of_physical_columns(case: str, names: list[str], types: list[str]) -> None:
    schema = ResolvedSchema.physical(names, [from_sql_string(text) for text in types])
    assert str(schema) == printed(case)


def test_resolved_schema_row_types_and_lookup() -> None:
    schema = rich_schema()
    assert schema.to_physical_row_data_type().field_names() == ["id", "name", "price", "ts",
                                                               "tags"]
    assert schema.to_sink_row_data_type().field_names() == ["id", "name", "price", "ts", "ts2",
                                                           "tags"]
    assert len(schema.to_source_row_data_type()) == 8
    assert schema.get_column("price") == PhysicalColumn("price", DataTypes.DECIMAL(10, 2))
    assert schema.get_column(99) is None
    unresolved = schema.to_schema()
    assert "`total` AS [`price` * 2]" in str(unresolved)
    assert "CONSTRAINT `PK_id` PRIMARY KEY (`id`) NOT ENFORCED" in str(unresolved)


def test_a_resolved_schema_refuses_duplicates_and_unknown_key_columns() -> None:
    with pytest.raises(ValidationError, match="duplicate column names"):
        ResolvedSchema.physical(["a", "a"], [DataTypes.INT(), DataTypes.INT()])
    with pytest.raises(ValidationError, match="Column 'b' does not exist"):
        ResolvedSchema((PhysicalColumn("a", DataTypes.INT()),), (),
                       UniqueConstraint.primary_key("PK_b", ["b"]))


class SummarizedExpression(FakeExpression):
    def as_summary_string(self) -> str:
        return "plus(id, 1)"


def test_an_expression_prints_by_its_summary_when_it_has_one() -> None:
    schema = (Schema.new_builder().column("id", DataTypes.BIGINT().not_null())
              .column_by_expression("expr_obj", SummarizedExpression("Add(...)")).build())
    assert "`expr_obj` AS plus(id, 1)" in CASES["schema full"]
    assert str(schema).splitlines()[2] == "  `expr_obj` AS plus(id, 1)"


def test_types_and_schemas_survive_pickling() -> None:
    """Plans carry them to Spark executors."""
    import pickle

    schema = rich_schema()
    assert pickle.loads(pickle.dumps(schema)) == schema
    unresolved = Schema.new_builder().column("a", "INT").primary_key("a").build()
    assert pickle.loads(pickle.dumps(unresolved)) == unresolved
    row = from_sql_string("ROW<a INT NOT NULL, b MAP<STRING, ARRAY<DECIMAL(10, 2)>>>")
    assert pickle.loads(pickle.dumps(row)) == row
