"""How the print sink shows records of each declared type (and of undeclared, pickled ones).

One job, parallelism 1, one ``print()`` per type, each sink with its own identifier so the
lines can be told apart; the harness compares the lines sorted, since the sinks interleave.
"""

from pyflink.common import Row, Types
from pyflink.datastream import StreamExecutionEnvironment


def print_formats():
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(1)

    ds = env.from_collection([1, 2], type_info=Types.INT())

    ds.map(lambda i: i * 10, output_type=Types.INT()).print("int")
    ds.map(lambda i: i * 1.5, output_type=Types.DOUBLE()).print("double")
    ds.map(lambda i: i % 2 == 0, output_type=Types.BOOLEAN()).print("boolean")
    ds.map(lambda i: f"s {i}", output_type=Types.STRING()).print("string")
    ds.map(lambda i: (f"k{i}", i), output_type=Types.TUPLE([Types.STRING(), Types.INT()])) \
        .print("tuple")
    ds.map(lambda i: Row(name=f"n{i}", score=i * 2),
           output_type=Types.ROW_NAMED(["name", "score"], [Types.STRING(), Types.LONG()])) \
        .print("row_named")
    ds.map(lambda i: Row(i, f"v {i}"), output_type=Types.ROW([Types.INT(), Types.STRING()])) \
        .print("row")
    ds.map(lambda i: [i, i + 1], output_type=Types.LIST(Types.INT())).print("list")
    ds.map(lambda i: {f"k{i}": i}, output_type=Types.MAP(Types.STRING(), Types.INT())) \
        .print("map")
    ds.map(lambda i: (f"k{i}", i)).print("pickled_tuple")
    ds.map(lambda i: Row(name=f"n{i}", score=i * 2)).print("pickled_row")
    ds.map(lambda i: {"k": [i, "x"]}).print("pickled_dict")

    env.execute("print_formats")


if __name__ == '__main__':
    print_formats()
