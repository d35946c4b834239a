"""A keyed running count with exactly-once checkpointing enabled and the state in RocksDB.

Configured the way a PyFlink 2 job is: state backend and checkpoint directory as configuration
keys passed to ``get_execution_environment``, then ``enable_checkpointing`` with
``CheckpointingMode.EXACTLY_ONCE`` and the timeout, minimum pause and concurrency on the
``CheckpointConfig``. The input is bounded and nothing fails, so the output is the plain count;
it is collected (parallelism 2) and the final count per key printed, with the number of
running updates seen.
"""

import tempfile

from pyflink.common import Configuration, Types
from pyflink.datastream import CheckpointingMode, StreamExecutionEnvironment

COLORS = ["red", "green", "blue", "red", "red", "blue", "amber", "green", "red", "blue"] * 20


def checkpointed_count():
    config = Configuration()
    config.set_string("state.backend.type", "rocksdb")
    config.set_string("execution.checkpointing.dir",
                      "file://" + tempfile.mkdtemp(prefix="parity-checkpoints-"))
    env = StreamExecutionEnvironment.get_execution_environment(config)
    env.set_parallelism(2)
    env.enable_checkpointing(200, CheckpointingMode.EXACTLY_ONCE)
    checkpoints = env.get_checkpoint_config()
    checkpoints.set_checkpoint_timeout(60000)
    checkpoints.set_min_pause_between_checkpoints(100)
    checkpoints.set_max_concurrent_checkpoints(1)

    counts = env.from_collection(COLORS, type_info=Types.STRING()) \
        .map(lambda color: (color, 1), output_type=Types.TUPLE([Types.STRING(), Types.INT()])) \
        .key_by(lambda pair: pair[0]) \
        .sum(1)

    final = {}
    updates = 0
    with counts.execute_and_collect("checkpointed_count") as results:
        for color, count in results:
            updates += 1
            final[color] = max(count, final.get(color, 0))
    print(f"{updates} updates")
    for color in sorted(final):
        print(f"{color}: {final[color]}")


if __name__ == "__main__":
    checkpointed_count()
