"""Physical partitioning and the runtime context: ``broadcast``, ``rebalance``, ``shuffle`` and
``rescale``, a non-keyed ``ProcessFunction``, ``project`` on tuples, and operators with their
own parallelism. (``partition_custom`` is left out: on PyFlink 2.3.0 it fails with "The
partition number should be a positive value, got -1".)

Which subtask a record reaches is defined only for broadcast (every subtask), so only that
result shows the subtask index; for the other partitionings the program shows that every record
arrives exactly once. Results are collected and printed sorted.
"""

from pyflink.common import Types
from pyflink.datastream import StreamExecutionEnvironment
from pyflink.datastream.functions import MapFunction, ProcessFunction, RuntimeContext

NUMBERS = list(range(1, 13))


class WhereAmI(MapFunction):

    def open(self, runtime_context: RuntimeContext):
        self.index = runtime_context.get_index_of_this_subtask()
        self.parallelism = runtime_context.get_number_of_parallel_subtasks()

    def map(self, value):
        return f"{value} on subtask {self.index + 1}/{self.parallelism}"


class Describe(ProcessFunction):

    def process_element(self, value, ctx: 'ProcessFunction.Context'):
        yield value, value * value, "square" if value % 2 else "even square"


def show(title, stream):
    print(title)
    with stream.execute_and_collect(title) as results:
        for line in sorted(results, key=str):
            print(line)


def partitioning():
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(3)

    def numbers():
        return env.from_collection(NUMBERS, type_info=Types.INT())

    show("== broadcast", env.from_collection([7, 8]).broadcast().map(WhereAmI()))
    show("== rebalance", numbers().rebalance().map(lambda value: value * 10))
    show("== shuffle", numbers().shuffle().map(lambda value: value * 100))
    show("== rescale with parallelism 2",
         numbers().rescale().map(lambda value: -value).set_parallelism(2))
    squares = numbers().process(
        Describe(), output_type=Types.TUPLE([Types.INT(), Types.INT(), Types.STRING()]))
    show("== process + project(2, 0)", squares.project(2, 0))


if __name__ == "__main__":
    partitioning()
