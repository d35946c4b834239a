"""A job script whose keys and state values are classes defined in the script itself (issue 27),
run as ``python script_classes_job.py WORK BACKEND [RESTORE_FROM]`` by
``test_script_classes_on_spark`` on embedded Spark.

Its classes live in ``__main__`` and reach the TaskManagers by value (cloudpickle): a frozen
dataclass ``Key`` to key by, and PyFlink's documented ``CountWithTimeoutFunction`` (a
``@dataclass CountWithTimestamp`` in a ``ValueState`` of ``Types.PICKLED_BYTE_ARRAY()``, a
processing-time timer per record) with a ``MapState`` of ``Visit`` dataclasses beside it. The
numbers 0..N-1 come from a gated source (``WORK/gate``): each reader stops after
``BEFORE_GATE`` numbers until the test opens the gate, so the test can kill this process after a
checkpoint, and run it again restoring from that checkpoint. Prints one JSON line per output
record, flushed at once.
"""

from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass

from flintlock.common import Types
from flintlock.common.config import Configuration
from flintlock.common.state import MapStateDescriptor, ValueStateDescriptor
from flintlock.common.watermark_strategy import WatermarkStrategy
from flintlock.datastream import KeyedProcessFunction, StreamExecutionEnvironment
from flintlock.testing.gates import FileGate, GatedNumberSequenceSource

NUMBERS = 600
BEFORE_GATE = 100
USERS = ("ann", "bob", "cy")
REGIONS = ("eu", "us")


@dataclass(frozen=True)
class Key:
    user: str
    region: str


@dataclass
class CountWithTimestamp:
    key: str
    count: int
    last_modified: int


@dataclass
class Visit:
    number: int
    parity: str


def key_of(number: int) -> Key:
    return Key(USERS[number % 3], REGIONS[number % 2])


class CountWithTimeoutFunction(KeyedProcessFunction):
    """PyFlink's example, with the key a dataclass and a map state of dataclasses beside."""

    def __init__(self) -> None:
        self.state = None
        self.visits = None

    def open(self, runtime_context) -> None:
        self.state = runtime_context.get_state(ValueStateDescriptor(
            "my_state", Types.PICKLED_BYTE_ARRAY()))
        self.visits = runtime_context.get_map_state(MapStateDescriptor(
            "visits", Types.STRING(), Types.PICKLED_BYTE_ARRAY()))

    def process_element(self, value, ctx):
        key = ctx.get_current_key()
        assert isinstance(key, Key), type(key)
        current = self.state.value()
        if current is None:
            current = CountWithTimestamp(f"{key.user}/{key.region}", 0, 0)
        current.count += 1
        current.last_modified = ctx.timestamp() or ctx.timer_service().current_processing_time()
        self.state.update(current)
        parity = "even" if value % 2 == 0 else "odd"
        seen = self.visits.get(parity)
        self.visits.put(parity, Visit(1 if seen is None else seen.number + 1, parity))
        ctx.timer_service().register_processing_time_timer(current.last_modified + 60_000)
        yield json.dumps(["count", current.key, current.count,
                          self.visits.get(parity).number])

    def on_timer(self, timestamp, ctx):
        result = self.state.value()
        if timestamp == result.last_modified + 60_000:
            yield json.dumps(["timeout", result.key, result.count, 0])


def main(work: str, backend: str, restore_from: str | None) -> None:
    config = Configuration()
    config.set_string("execution.checkpointing.dir", os.path.join(work, "chk"))
    config.set_string("execution.checkpointing.interval", "150 ms")
    config.set_string("execution.checkpointing.externalized-checkpoint-retention",
                      "retain-on-cancellation")
    config.set_string("restart-strategy.type", "none")
    if backend.startswith("rocksdb"):
        config.set_string("state.backend.type", "rocksdb")
        config.set_string("state.backend.local-dir", os.path.join(work, "rocksdb"))
        config.set_string("execution.checkpointing.incremental",
                          str(backend == "rocksdb-incremental").lower())
    if restore_from:
        config.set_string("execution.state-recovery.path", restore_from)
    env = StreamExecutionEnvironment.get_execution_environment(config)
    env.set_parallelism(2)
    gate = FileGate(os.path.join(work, "gate"))
    numbers = env.from_source(
        GatedNumberSequenceSource(0, NUMBERS - 1, gate, BEFORE_GATE),
        WatermarkStrategy.no_watermarks(), "numbers").uid("numbers")
    counted = (numbers.key_by(key_of)
               .process(CountWithTimeoutFunction(), output_type=Types.STRING()).uid("counts"))
    for line in counted.execute_and_collect("script classes"):
        print(line, flush=True)
    print(json.dumps(["done", "", 0, 0]), flush=True)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3] if len(sys.argv) > 3 else None)
