"""Values of each basic and composite type after they crossed a network exchange in a job
that declares their types.

A collection of records is declared with a ROW type holding one field of each type, shuffled
by ``key_by`` through a ``map`` declaring the type and by ``key_by`` again into a ``flat_map``
(so the records are serialized with the declared type twice). The ``flat_map`` describes each
field by its Python type and ``repr``: what a PyFlink user's function receives for a declared
``FLOAT``, ``SHORT``, ``BIG_DEC``, ``SQL_DATE``, ``LIST``, ... Parallelism 1; collected in order.
"""

import datetime
import decimal

from pyflink.common import Types
from pyflink.datastream import StreamExecutionEnvironment

NAMES = ["string", "boolean", "byte", "short", "int", "long", "float", "double", "big_dec",
         "sql_date", "sql_time", "sql_timestamp", "list", "map", "tuple"]

RECORD = Types.ROW_NAMED(NAMES, [
    Types.STRING(), Types.BOOLEAN(), Types.BYTE(), Types.SHORT(), Types.INT(), Types.LONG(),
    Types.FLOAT(), Types.DOUBLE(), Types.BIG_DEC(), Types.SQL_DATE(), Types.SQL_TIME(),
    Types.SQL_TIMESTAMP(), Types.LIST(Types.INT()), Types.MAP(Types.STRING(), Types.DOUBLE()),
    Types.TUPLE([Types.STRING(), Types.LONG()])])

VALUES = [
    ["ä ü ☃", True, -7, 300, 2 ** 31 - 1, 2 ** 62, 0.1, 0.1, decimal.Decimal("12.345"),
     datetime.date(2024, 2, 29), datetime.time(13, 14, 15),
     datetime.datetime(2024, 2, 29, 13, 14, 15, 123000), [1, 2, 3], {"x": 1.5}, ("t", 5)],
    ["", False, 127, -32768, -1, -(2 ** 63), 3.25, 1e300, decimal.Decimal("-0.5"),
     datetime.date(1970, 1, 1), datetime.time(0, 0, 0),
     datetime.datetime(1999, 12, 31, 23, 59, 59), [], {}, ("", -1)],
]


def describe(record):
    yield f"== record {record.string!r}"
    for name in NAMES:
        value = record[name]
        yield f"{name}: {type(value).__name__} {value!r}"


def types_roundtrip():
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(1)

    records = env.from_collection([tuple(values) for values in VALUES], type_info=RECORD)
    described = records.key_by(lambda record: record.string, key_type=Types.STRING()) \
        .map(lambda record: record, output_type=RECORD) \
        .key_by(lambda record: record.int, key_type=Types.INT()) \
        .flat_map(describe, output_type=Types.STRING())

    with described.execute_and_collect("types_roundtrip") as results:
        for line in results:
            print(line)


if __name__ == "__main__":
    types_roundtrip()
