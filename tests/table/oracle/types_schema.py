# ruff: noqa: E501 - the oracle programs hold long SQL text
"""Oracle: type spellings, inferred types, Schema text, print_schema and DESCRIBE on PyFlink.

Prints each case after a ``=== CASE name`` marker; the output is tests/table/fixtures/types_schema.txt.
"""

import datetime
import decimal
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _common import case, end
from pyflink.table import DataTypes, EnvironmentSettings, Row, Schema, TableEnvironment
from pyflink.table.expressions import col, lit
from pyflink.table.types import _infer_schema_from_data, _to_java_data_type

t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())

# -- every DDL type spelling, as Java prints the resolved type ---------------------------------
SPELLINGS = [
    "INT", "INTEGER", "BIGINT", "TINYINT", "SMALLINT", "BOOLEAN", "FLOAT", "DOUBLE",
    "DOUBLE PRECISION", "REAL", "STRING", "VARCHAR", "VARCHAR(10)", "CHAR", "CHAR(5)",
    "DECIMAL", "DECIMAL(5)", "DECIMAL(10, 2)", "NUMERIC(12,3)", "DEC(4,1)", "BYTES", "BINARY",
    "BINARY(4)", "VARBINARY", "VARBINARY(8)", "DATE", "TIME", "TIME(3)", "TIMESTAMP",
    "TIMESTAMP(3)", "TIMESTAMP(9)", "TIMESTAMP(0)", "TIMESTAMP WITHOUT TIME ZONE",
    "TIMESTAMP(3) WITHOUT TIME ZONE", "TIMESTAMP_LTZ", "TIMESTAMP_LTZ(3)",
    "TIMESTAMP WITH LOCAL TIME ZONE", "TIMESTAMP(3) WITH LOCAL TIME ZONE", "ARRAY<INT>",
    "ARRAY<STRING NOT NULL>", "INT ARRAY", "MAP<STRING, INT>", "MAP<INT NOT NULL, ARRAY<STRING>>",
    "ROW<a INT, b STRING>", "ROW<`a b` INT NOT NULL, c ROW<d DOUBLE>>", "ROW(a INT, b STRING)",
    "ROW<a INT 'the a', b STRING>", "MULTISET<STRING>", "STRING MULTISET", "INT NOT NULL",
    "STRING NOT NULL", "INT NULL", "BIGINT NOT NULL", "INTERVAL DAY", "INTERVAL YEAR TO MONTH",
    "INTERVAL DAY TO SECOND(3)", "INTERVAL SECOND", "INTERVAL MINUTE TO SECOND",
    "VARCHAR(2147483647)", "VARBINARY(2147483647)", "CHARACTER VARYING(5)",
]
for index, spelling in enumerate(SPELLINGS):
    case(f"ddl_type {spelling}")
    try:
        t_env.execute_sql(
            f"CREATE TEMPORARY TABLE t{index} (c {spelling}) WITH ('connector' = 'blackhole')")
        t_env.from_path(f"t{index}").print_schema()
    except Exception as error:
        print("ERROR", type(error).__name__, str(error).splitlines()[0][:300])

# -- DataTypes factories as Java sees them ------------------------------------------------------
FACTORIES = {
    "NULL": None,
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
for name, data_type in FACTORIES.items():
    case(f"factory {name}")
    if data_type is None:
        data_type = DataTypes.NULL()
    print("python str:", str(data_type))
    print("python repr:", repr(data_type))
    try:
        print("java:", _to_java_data_type(data_type).toString())
    except Exception as error:
        print("ERROR", type(error).__name__, str(error).splitlines()[0][:300])

# -- inference for from_elements ---------------------------------------------------------------
INFER = {
    "int": [(1,)], "float": [(1.5,)], "str": [("a",)], "bool": [(True,)],
    "bytearray": [(bytearray(b"ab"),)], "decimal": [(decimal.Decimal("1.5"),)],
    "date": [(datetime.date(2023, 1, 2),)], "time": [(datetime.time(1, 2, 3),)],
    "datetime": [(datetime.datetime(2023, 1, 2, 3, 4, 5),)],
    "list": [([1, 2],)], "list_str": [(["a"],)], "dict": [({"a": 1},)],
    "row": [(Row(1, "a"),)], "named_row_elements": [Row(x=1, y="a")],
    "tuple_nested": [((1, "a"),)], "two_columns": [(1, "a"), (2, "b")],
    "null_then_int": [(None, "a"), (1, "b")], "list_elements": [[1, "a"]],
    "dict_elements": [{"b": 1, "a": "x"}],
}
for name, elements in INFER.items():
    case(f"infer {name}")
    try:
        print("python:", repr(_infer_schema_from_data(elements)))
    except Exception as error:
        print("python ERROR", type(error).__name__, str(error).splitlines()[0][:300])
    try:
        t_env.from_elements(elements).print_schema()
    except Exception as error:
        print("ERROR", type(error).__name__, str(error).splitlines()[0][:300])

for name, elements in {"bytes": [(b"ab",)], "timedelta": [(datetime.timedelta(seconds=3),)],
                       "empty_list": [([],)], "none_only": [(None,)],
                       "int_then_str": [(1,), ("a",)], "atomic": [1, 2]}.items():
    case(f"infer {name}")
    try:
        print("python:", repr(_infer_schema_from_data(elements)))
    except Exception as error:
        print("python ERROR", type(error).__name__, str(error).splitlines()[0][:300])

case("from_elements names")
t_env.from_elements([(1, "a", 2.0)], ["x", "y"]).print_schema()
case("from_elements schema")
t_env.from_elements([(1, "a")], DataTypes.ROW([DataTypes.FIELD("a", DataTypes.INT()),
                                               DataTypes.FIELD("b", DataTypes.STRING())])
                    ).print_schema()

# -- Schema builder text ----------------------------------------------------------------------
case("schema empty")
print(str(Schema.new_builder().build()))
case("schema physical")
print(str(Schema.new_builder().column("a", DataTypes.BIGINT())
          .column("b", DataTypes.STRING()).column("c", "DECIMAL(10, 2)").build()))
case("schema full")
print(str(Schema.new_builder()
          .column("id", DataTypes.BIGINT().not_null())
          .column("name", "STRING")
          .column("ts", DataTypes.TIMESTAMP(3))
          .column_by_expression("total", "id * 2")
          .column_by_expression("expr_obj", col("id") + lit(1))
          .column_by_metadata("part", DataTypes.INT(), "partition", True)
          .column_by_metadata("offset", DataTypes.BIGINT())
          .column_by_metadata("k", "STRING", "key")
          .watermark("ts", "ts - INTERVAL '5' SECOND")
          .primary_key("id").build()))
case("schema pk named")
print(str(Schema.new_builder().column("a", DataTypes.INT().not_null())
          .column("b", DataTypes.INT().not_null()).primary_key_named("my_pk", "a", "b").build()))
case("schema pk two")
print(str(Schema.new_builder().column("a", DataTypes.INT().not_null())
          .column("b", DataTypes.INT().not_null()).primary_key("a", "b").build()))
case("schema from_row_data_type")
print(str(Schema.new_builder().from_row_data_type(DataTypes.ROW(
    [DataTypes.FIELD("a", DataTypes.INT()), DataTypes.FIELD("b", DataTypes.STRING())])).build()))
case("schema from_fields")
print(str(Schema.new_builder().from_fields(["a", "b"], [DataTypes.INT(), DataTypes.STRING()])
          .build()))
case("schema watermark expr obj")
print(str(Schema.new_builder().column("ts", DataTypes.TIMESTAMP(3))
          .watermark("ts", col("ts")).build()))
case("schema from_schema")
base = Schema.new_builder().column("a", DataTypes.INT()).build()
print(str(Schema.new_builder().from_schema(base).column("b", DataTypes.STRING()).build()))
case("schema comment-less wm str")
print(str(Schema.new_builder().column("ts", "TIMESTAMP_LTZ(3)")
          .watermark("ts", "ts").build()))

# -- print_schema and DESCRIBE of a rich DDL table ----------------------------------------------
t_env.execute_sql("""
CREATE TABLE rich (
  id BIGINT NOT NULL,
  name STRING COMMENT 'the name',
  price DECIMAL(10, 2),
  ts TIMESTAMP(3),
  total AS price * 2,
  `part` INT METADATA FROM 'partition' VIRTUAL,
  ts2 TIMESTAMP_LTZ(3) METADATA FROM 'timestamp',
  tags ARRAY<STRING>,
  WATERMARK FOR ts AS ts - INTERVAL '5' SECOND,
  PRIMARY KEY (id) NOT ENFORCED
) WITH ('connector' = 'kafka', 'topic' = 'x', 'properties.bootstrap.servers' = 'localhost:9',
        'format' = 'json')
""")
case("print_schema rich")
try:
    t_env.from_path("rich").print_schema()
except Exception as error:
    print("ERROR", type(error).__name__, str(error).splitlines()[0][:300])
case("describe rich")
try:
    t_env.execute_sql("DESCRIBE rich").print()
except Exception as error:
    print("ERROR", type(error).__name__, str(error).splitlines()[0][:300])
t_env.execute_sql("""
CREATE TABLE rich2 (
  id BIGINT NOT NULL,
  k STRING NOT NULL,
  name STRING COMMENT 'the name',
  ts TIMESTAMP(3),
  proc AS PROCTIME(),
  WATERMARK FOR ts AS ts - INTERVAL '5' SECOND,
  PRIMARY KEY (id, k) NOT ENFORCED
) WITH ('connector' = 'datagen')
""")
case("print_schema rich2")
t_env.from_path("rich2").print_schema()
case("describe rich2")
t_env.execute_sql("DESCRIBE rich2").print()
case("describe rich2 collect")
with t_env.execute_sql("DESCRIBE rich2").collect() as rows:
    for row in rows:
        print(repr(row))
case("describe simple")
t_env.execute_sql("CREATE TABLE simple (a INT, b STRING) WITH ('connector' = 'datagen')")
t_env.execute_sql("DESCRIBE simple").print()
case("print_schema select")
t_env.sql_query("SELECT id, name, ts FROM rich2").print_schema()
case("print_schema pk named")
t_env.execute_sql("""CREATE TABLE pkn (a INT, b INT, CONSTRAINT my_pk PRIMARY KEY (a, b) NOT ENFORCED)
                     WITH ('connector' = 'datagen')""")
t_env.from_path("pkn").print_schema()
case("print_schema unicode")
t_env.execute_sql("CREATE TABLE uni (`中文` INT, `a b` STRING) WITH ('connector' = 'datagen')")
t_env.from_path("uni").print_schema()
case("describe unicode")
t_env.execute_sql("DESCRIBE uni").print()
case("print_schema empty_values")
t_env.sql_query("SELECT 1 AS x").print_schema()
end()
