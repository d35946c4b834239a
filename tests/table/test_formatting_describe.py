"""DESCRIBE's rows and printed table against PyFlink 2.3.0
(tests/table/fixtures/types_schema.txt, "describe" cases)."""

from __future__ import annotations

from flintlock.table.formatting.describe import describe_columns, describe_rows, render_describe
from flintlock.table.resolved_schema import (
    ComputedColumn,
    PhysicalColumn,
    ResolvedSchema,
    TimeAttribute,
    UniqueConstraint,
    WatermarkSpec,
)
from flintlock.table.types import DataTypes
from tests.table.oracle.cases import load_cases
from tests.table.test_schema import rich_schema

CASES = load_cases("types_schema.txt")


def rich2() -> ResolvedSchema:
    return ResolvedSchema(
        (PhysicalColumn("id", DataTypes.BIGINT(False)),
         PhysicalColumn("k", DataTypes.STRING(False)),
         PhysicalColumn("name", DataTypes.STRING(), comment="the name"),
         PhysicalColumn("ts", DataTypes.TIMESTAMP(3), time_attribute=TimeAttribute.ROWTIME),
         ComputedColumn("proc", DataTypes.TIMESTAMP_LTZ(3, False), None, "PROCTIME()",
                        time_attribute=TimeAttribute.PROCTIME)),
        (WatermarkSpec.of("ts", None, "`ts` - INTERVAL '5' SECOND", DataTypes.TIMESTAMP(3)),),
        UniqueConstraint.primary_key("PK_id_k", ["id", "k"]))


def test_describe_of_a_rich_table_prints_as_pyflink() -> None:
    assert render_describe(rich_schema()) == CASES["describe rich"]


def test_describe_with_proctime_and_a_two_column_key() -> None:
    assert render_describe(rich2()) == CASES["describe rich2"]


def test_describe_rows_are_what_collect_returns() -> None:
    expected = CASES["describe rich2 collect"].splitlines()
    assert [f"<Row({', '.join(repr(value) for value in row)})>"
            for row in describe_rows(rich2())] == expected


def test_describe_without_comments_has_no_comment_column() -> None:
    simple = ResolvedSchema.physical(["a", "b"], [DataTypes.INT(), DataTypes.STRING()])
    assert render_describe(simple) == CASES["describe simple"]
    assert [name for name, _ in describe_columns(simple)] == [
        "name", "type", "null", "key", "extras", "watermark"]
    unicode = ResolvedSchema.physical(["中文", "a b"], [DataTypes.INT(), DataTypes.STRING()])
    assert render_describe(unicode) == CASES["describe unicode"]
