"""A word count over enough records to fill many network buffers: 60,000 words made by a
fixed formula, at parallelism 2 with a ``rebalance`` before the keyed count, and the same
stream unioned with itself (every word counted twice).

Only milestones of the running counts leave the job (every 2,000th count of a word: each
value is reached exactly once per word, whatever the interleaving), because collecting all
120,000 updates through PyFlink's client takes many minutes; they are printed sorted.
"""

from pyflink.common import Types
from pyflink.datastream import StreamExecutionEnvironment

VOCABULARY = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota",
              "kappa", "lambda", "mu"]


def line(i):
    return " ".join(VOCABULARY[(i * 7 + j * j) % len(VOCABULARY)] for j in range(6))


def volume_word_count():
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(2)

    words = env.from_collection([line(i) for i in range(10_000)], type_info=Types.STRING()) \
        .rebalance() \
        .flat_map(lambda text: text.split(), output_type=Types.STRING())
    milestones = words.union(words) \
        .map(lambda word: (word, 1), output_type=Types.TUPLE([Types.STRING(), Types.INT()])) \
        .key_by(lambda pair: pair[0]) \
        .reduce(lambda a, b: (a[0], a[1] + b[1])) \
        .filter(lambda pair: pair[1] % 2000 == 0)

    with milestones.execute_and_collect("volume_word_count") as results:
        for word, count in sorted(results):
            print(f"{word} reached {count}")


if __name__ == "__main__":
    volume_word_count()
