"""Where a ``Row`` gets its field names from: the declared ``Types.ROW_NAMED`` type.

PyFlink serializes the elements of ``from_collection`` with the declared ROW type, so a
positional ``Row("north", 3)`` (no names) arrives downstream as a row with the type's field
names; downstream functions read the fields by name, and ``sum`` takes a field name. (A
positional row returned by a ``map`` declaring the type and read by a chained operator keeps
no names in PyFlink 2.3.0 either: ``row.shop`` raises ``AttributeError`` there, so the program
does not do that.) Parallelism 1, results collected in order.
"""

from pyflink.common import Row, Types
from pyflink.datastream import StreamExecutionEnvironment

SALE = Types.ROW_NAMED(["shop", "amount"], [Types.STRING(), Types.LONG()])


def show(title, stream):
    print(title)
    with stream.execute_and_collect(title) as results:
        for result in results:
            print(result)


def row_field_names():
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(1)

    positional = env.from_collection([Row("north", 3), Row("south", 10)], type_info=SALE)
    show("== positional rows from from_collection", positional)
    show("== fields read by name",
         positional.map(lambda sale: f"{sale.shop} sold {sale['amount']}"))

    show("== keyed sum by field name over positional rows",
         positional.key_by(lambda sale: sale[0]).sum("amount"))


if __name__ == "__main__":
    row_field_names()
