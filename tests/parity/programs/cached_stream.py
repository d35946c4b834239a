"""``DataStream.cache()`` in BATCH mode, as PyFlink's documentation shows it: a stream cached
once and used by three jobs of the same environment, which print the same results on both.

Whether the later jobs reuse the cached records is not part of the output: PyFlink 2.3.0's
local execution computes the stream again for every job (each job runs on a new local
cluster, so the cached partitions are gone; counted with a side file while writing this
program: 8, 16, 24 calls after the three jobs), flintlock computes it once
(``tests/integration/test_cache.py`` counts it). ``CachedDataStream.invalidate()`` raises a
``Py4JError`` on PyFlink 2.3.0 ("Method invalidate([]) does not exist"), so the program does
not call it. Parallelism 1; results printed sorted.
"""

from pyflink.common import Types
from pyflink.datastream import RuntimeExecutionMode, StreamExecutionEnvironment


def main():
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_runtime_mode(RuntimeExecutionMode.BATCH)
    env.set_parallelism(1)

    squares = env.from_collection(list(range(1, 9)), type_info=Types.INT()) \
        .map(lambda v: v * v, output_type=Types.INT()).cache()

    def run(title, stream):
        with stream.execute_and_collect(title) as results:
            print(f"{title}: {sorted(results)}")

    run("first job", squares.map(lambda v: v + 1, output_type=Types.INT()))
    run("second job", squares.filter(lambda v: v % 2 == 0))
    run("third job", squares)
    env.close()


if __name__ == "__main__":
    main()
