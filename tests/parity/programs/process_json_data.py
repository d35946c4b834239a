"""JSON records into ``Row`` objects with named fields (``Types.ROW_NAMED``), filtered and
re-shaped by field name.

A collection of ``(id, json)`` tuples declared as a named ROW type becomes a stream of
``Row``s; fields are read by attribute (``row.info``), by name (``row["id"]``) and by position;
the parsed rows are declared with ``Types.ROW_NAMED`` again. Parallelism 1; the results are
collected in order and printed with ``repr`` and ``as_dict``, and a pickled (undeclared) row
stream goes through the print sink.
"""

import json

from pyflink.common import Row, Types
from pyflink.datastream import StreamExecutionEnvironment

CONTACTS = [
    (1, '{"name": "Flink", "tel": 123, "addr": {"country": "Germany", "city": "Berlin"}}'),
    (2, '{"name": "hello", "tel": 135, "addr": {"country": "China", "city": "Shanghai"}}'),
    (3, '{"name": "world", "tel": 124, "addr": {"country": "USA", "city": "NewYork"}}'),
    (4, '{"name": "PyFlink", "tel": 32, "addr": {"country": "China", "city": "Hangzhou"}}'),
    (5, '{"name": "stream", "tel": 7, "addr": {"country": "Germany", "city": "Munich"}}'),
]

CONTACT = Types.ROW_NAMED(["id", "name", "tel", "country", "city"],
                          [Types.INT(), Types.STRING(), Types.LONG(), Types.STRING(),
                           Types.STRING()])


def parse(record):
    data = json.loads(record.info)
    return Row(id=record["id"], name=data["name"], tel=data["tel"] + 1,
               country=data["addr"]["country"], city=data["addr"]["city"])


def process_json_data():
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(1)

    raw = env.from_collection(CONTACTS,
                              type_info=Types.ROW_NAMED(["id", "info"],
                                                        [Types.INT(), Types.STRING()]))
    contacts = raw.map(parse, output_type=CONTACT)
    outside_china = contacts.filter(lambda row: row.country != "China")

    with outside_china.execute_and_collect("process_json_data") as results:
        for row in results:
            print(repr(row))
            print(row.as_dict())
            print(row[0], row["name"], row.city, len(row))

    contacts.map(lambda row: Row(who=row.name, where=f"{row.city}, {row.country}")).print()
    env.execute("process_json_data print")


if __name__ == "__main__":
    process_json_data()
