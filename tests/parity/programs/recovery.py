"""Recovery from a failure with exactly-once results: a keyed running count whose ``map``
fails once, midway, on the first attempt; the fixed-delay restart strategy restarts the job
from its latest checkpoint, and ``execute_and_collect`` (with checkpointing, exactly once)
still delivers each running count once.

The function remembers that it has failed in a marker file (a restart runs new function
objects). The output — the number of updates and the final count per key — is that of a run
without the failure.
"""

import os
import tempfile

from pyflink.common import Configuration, Types
from pyflink.datastream import CheckpointingMode, StreamExecutionEnvironment
from pyflink.datastream.functions import MapFunction

WORDS = ["ant", "bee", "cat", "ant", "dog", "bee", "ant", "eel", "cat", "ant"] * 30


class FailOnce(MapFunction):

    def __init__(self, marker, at):
        self.marker = marker
        self.at = at
        self.seen = 0

    def map(self, value):
        self.seen += 1
        if self.seen == self.at and not os.path.exists(self.marker):
            with open(self.marker, "w") as marker:
                marker.write("failed once")
            raise RuntimeError("injected failure")
        return value, 1


def recovery():
    workdir = tempfile.mkdtemp(prefix="parity-recovery-")
    config = Configuration()
    config.set_string("restart-strategy.type", "fixed-delay")
    config.set_string("restart-strategy.fixed-delay.attempts", "3")
    config.set_string("restart-strategy.fixed-delay.delay", "200 ms")
    config.set_string("execution.checkpointing.dir", "file://" + os.path.join(workdir, "chk"))
    env = StreamExecutionEnvironment.get_execution_environment(config)
    env.set_parallelism(2)
    env.enable_checkpointing(100, CheckpointingMode.EXACTLY_ONCE)

    counts = env.from_collection(WORDS, type_info=Types.STRING()) \
        .map(FailOnce(os.path.join(workdir, "failed"), at=len(WORDS) // 2),
             output_type=Types.TUPLE([Types.STRING(), Types.INT()])) \
        .key_by(lambda pair: pair[0]) \
        .sum(1)

    final = {}
    updates = 0
    with counts.execute_and_collect("recovery") as results:
        for word, count in results:
            updates += 1
            final[word] = max(count, final.get(word, 0))
    print(f"failed once: {os.path.exists(os.path.join(workdir, 'failed'))}")
    print(f"{updates} updates")
    for word in sorted(final):
        print(f"{word}: {final[word]}")


if __name__ == "__main__":
    recovery()
