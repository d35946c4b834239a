"""Word count in BATCH execution mode: a keyed ``reduce`` emits one final count per word.

Bounded input from ``from_collection``; in ``RuntimeExecutionMode.BATCH`` a keyed reduction
emits only its final value per key (no running updates). The order of the keys is not defined,
so the harness compares sorted lines.
"""

from pyflink.common import Types
from pyflink.datastream import RuntimeExecutionMode, StreamExecutionEnvironment

LINES = [
    "apples and pears and plums",
    "pears for the pie, plums for the jam",
    "and apples for everyone",
]


def batch_word_count():
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_runtime_mode(RuntimeExecutionMode.BATCH)
    env.set_parallelism(2)

    env.from_collection(LINES, type_info=Types.STRING()) \
        .flat_map(lambda line: [word.strip(",") for word in line.split()]) \
        .map(lambda word: (word, 1)) \
        .key_by(lambda pair: pair[0]) \
        .reduce(lambda a, b: (a[0], a[1] + b[1])) \
        .map(lambda pair: f"{pair[0]}: {pair[1]}") \
        .print() \
        .set_parallelism(1)

    env.execute("batch_word_count")


if __name__ == "__main__":
    batch_word_count()
