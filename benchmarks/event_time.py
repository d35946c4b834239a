"""What event time costs: one keyed job in three variants, at parallelism P.

* ``plain`` — collection source → ``key_by`` → running ``reduce`` (no timestamps);
* ``stamped`` — the same after ``assign_timestamps_and_watermarks`` (bounded out-of-orderness):
  timestamps travel with every record, watermarks every ``--watermark-ms``;
* ``window`` — the stamped stream into a tumbling event-time window of 1 s per key, reduced
  incrementally (one output per key and window).

Reported per variant: input records/s from submission to the last collected output
(``execute_and_collect``). TaskManagers run as threads of this process (one GIL):

    .venv/bin/python -m benchmarks.event_time --records 400000 --parallelism 2
"""

from __future__ import annotations

import argparse
import json
import sys
import time

from flintlock.common import Duration, WatermarkStrategy
from flintlock.common.watermark_strategy import TimestampAssigner
from flintlock.datastream import StreamExecutionEnvironment
from flintlock.datastream.window import TumblingEventTimeWindows

KEYS = 100


class ValueIsTimestamp(TimestampAssigner):
    def extract_timestamp(self, value: int, record_timestamp: int) -> int:
        return value


def _key(value: int) -> int:
    return value % KEYS


def _add(a: int, b: int) -> int:
    return a + b


def run(variant: str, records: int, parallelism: int, watermark_ms: int) -> dict[str, float]:
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(parallelism)
    env.get_config().set_auto_watermark_interval(watermark_ms)
    stream = env.from_collection(list(range(records)))
    if variant != "plain":
        strategy = WatermarkStrategy.for_bounded_out_of_orderness(Duration.of_millis(10)) \
            .with_timestamp_assigner(ValueIsTimestamp())
        stream = stream.assign_timestamps_and_watermarks(strategy)
    keyed = stream.key_by(_key)
    result = keyed.window(TumblingEventTimeWindows.of(Duration.of_seconds(1))).reduce(_add) \
        if variant == "window" else keyed.reduce(_add)
    started = time.perf_counter()
    outputs = sum(1 for _ in result.execute_and_collect(f"event time benchmark: {variant}"))
    seconds = time.perf_counter() - started
    return {"records_per_s": records / seconds, "seconds": seconds, "outputs": outputs}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=int, default=400_000)
    parser.add_argument("--parallelism", type=int, default=2)
    parser.add_argument("--watermark-ms", type=int, default=200)
    args = parser.parse_args(argv)
    import flintlock.datastream.stream_execution_environment as environment
    from flintlock.testing.executor import ThreadExecutor

    executor = ThreadExecutor()
    environment.load_executor = lambda: executor  # type: ignore[assignment]
    results = {variant: run(variant, args.records, args.parallelism, args.watermark_ms)
               for variant in ("plain", "stamped", "window")}
    json.dump(results, sys.stdout, indent=2)
    print()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
