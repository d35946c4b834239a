"""Count windows, which need no event time: per key, a tumbling window of three elements
summed with ``reduce``, and a tumbling window of two elements handed to a
``WindowFunction`` that sees the window and all its elements. Elements of an unfinished
window at the end of the input are never emitted.

Parallelism 1; collected in order.
"""

from collections.abc import Iterable

from pyflink.common import Types
from pyflink.datastream import StreamExecutionEnvironment, WindowFunction
from pyflink.datastream.window import CountWindow

SCORES = [("red", 3), ("blue", 1), ("red", 4), ("red", 1), ("blue", 5), ("red", 9),
          ("blue", 2), ("blue", 6), ("red", 5), ("blue", 3), ("red", 5)]


class Describe(WindowFunction[tuple, str, str, CountWindow]):

    def apply(self, key: str, window: CountWindow, inputs: Iterable[tuple]):
        values = [score for _, score in inputs]
        yield f"{key}: {values} total {sum(values)}"


def show(title, stream):
    print(title)
    with stream.execute_and_collect(title) as results:
        for result in results:
            print(result)


def count_windows():
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(1)

    def by_team():
        return env.from_collection(SCORES, type_info=Types.TUPLE([Types.STRING(), Types.INT()])) \
            .key_by(lambda score: score[0], key_type=Types.STRING())

    show("== count_window(3).reduce",
         by_team().count_window(3).reduce(lambda a, b: (a[0], a[1] + b[1])))
    show("== count_window(2).apply", by_team().count_window(2).apply(Describe(), Types.STRING()))


if __name__ == "__main__":
    count_windows()
