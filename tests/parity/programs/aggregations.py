"""The built-in keyed aggregations: ``sum``, ``min``, ``max``, ``min_by`` and ``max_by``, by
position on tuples and by field name on ``Row``s.

``min``/``max``/``sum`` replace one field of the key's first record; ``min_by``/``max_by``
return the whole record holding the extreme (the first one on ties). Parallelism 1, so every
running value comes out in input order; results are collected and printed.
"""

from pyflink.common import Types
from pyflink.datastream import StreamExecutionEnvironment

READINGS = [
    ("s1", 20, "08:00"), ("s2", 15, "08:00"), ("s1", 18, "08:05"), ("s1", 25, "08:10"),
    ("s2", 15, "08:10"), ("s2", 11, "08:15"), ("s1", 25, "08:20"), ("s2", 19, "08:25"),
]

READING = Types.TUPLE([Types.STRING(), Types.INT(), Types.STRING()])
SALES = [("north", 3, "pen"), ("south", 10, "ink"), ("north", 7, "pad"),
         ("north", 2, "pin"), ("south", 10, "nib"), ("south", 4, "cap")]

SALE = Types.ROW_NAMED(["shop", "amount", "item"], [Types.STRING(), Types.LONG(), Types.STRING()])


def show(title, stream):
    print(title)
    with stream.execute_and_collect(title) as results:
        for result in results:
            print(repr(result))


def aggregations():
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(1)

    def by_sensor():
        return env.from_collection(READINGS, type_info=READING).key_by(lambda r: r[0])

    show("== sum(1)", by_sensor().sum(1))
    show("== min(1)", by_sensor().min(1))
    show("== max(1)", by_sensor().max(1))
    show("== min_by(1)", by_sensor().min_by(1))
    show("== max_by(1)", by_sensor().max_by(1))

    def by_shop():
        sales = env.from_collection(SALES, type_info=SALE)
        return sales.key_by(lambda sale: sale.shop)

    show("== sum('amount')", by_shop().sum("amount"))
    show("== max('amount')", by_shop().max("amount"))
    show("== min_by('amount')", by_shop().min_by("amount"))
    show("== max_by('amount')", by_shop().max_by("amount"))


if __name__ == "__main__":
    aggregations()
