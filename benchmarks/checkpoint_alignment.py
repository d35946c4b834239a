"""Checkpoint duration under full backpressure: aligned against unaligned (issue #3).

The job: a generating source → ``map`` (a ~200-byte record) → ``key_by`` → a slow ``map``
(``--slow-ms`` per record, far slower than the source) → a discarding sink, at parallelism P
on embedded Spark (or ``--mode threads``). The exchange between the source and the slow
operator is full all the time, so an aligned barrier waits behind every queued buffer while
an unaligned one overtakes them (they become channel state).

For each mode the job runs ``--seconds`` with a checkpoint every ``--interval-ms``; reported
per mode: the completed checkpoints' end-to-end durations (trigger → last ack, from the
coordinator's statistics via ``JobManager.describe().checkpoints``), their state sizes, and
how many were still in progress or failed when the job was cancelled. The machine's load
average is printed too (this benchmark shares its cores).

    .venv/bin/python -m benchmarks.checkpoint_alignment --parallelism 2 --seconds 20

``--alternating-ms 200`` adds a third run: aligned checkpoints that turn unaligned after 200 ms.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from typing import Any

import cloudpickle

from flintlock.common import WatermarkStrategy
from flintlock.common.config import Configuration
from flintlock.datastream import StreamExecutionEnvironment
from flintlock.datastream.connectors import Sink, Source

SLOW_S = 0.002  # --slow-ms sets it (read at call time: shipped by value with the function)


class EndlessSource(Source):
    """Subtask i of p emits i, i+p, i+2p, ... until cancelled (checkpointed position)."""

    def is_bounded(self) -> bool:
        return False

    def create_reader(self, subtask_index: int, parallelism: int) -> _Reader:
        return _Reader(subtask_index, parallelism)


class _Reader:
    def __init__(self, start: int, step: int) -> None:
        self.next, self.step = start, step

    def restore(self, state: list[int]) -> None:
        if state:
            self.next = state[0]

    def poll(self, max_records: int) -> tuple[list[int], bool]:
        records = list(range(self.next, self.next + max_records * self.step, self.step))
        self.next += max_records * self.step
        return records, False

    def snapshot_state(self, checkpoint_id: int) -> list[int]:
        return [self.next]


class DiscardingSink(Sink):
    def create_writer(self, subtask_index: int, parallelism: int) -> _Discard:
        return _Discard()


class _Discard:
    def restore(self, state: list[object]) -> None:
        pass

    def write(self, records: list[object]) -> None:
        pass

    def snapshot_state(self, checkpoint_id: int) -> list[object]:
        return []

    def commit(self, checkpoint_id: int) -> None:
        pass

    def end_input(self) -> None:
        pass

    def close(self) -> None:
        pass


def _padded(x: int) -> tuple[int, str]:
    return (x, f"{x:0200d}")  # a distinct string per record: pickle cannot share it


def _key(record: tuple[int, str]) -> int:
    return record[0] % 64


def _slow(record: tuple[int, str]) -> tuple[int, str]:
    time.sleep(SLOW_S)
    return record


def _use_threads() -> None:
    import flintlock.datastream.stream_execution_environment as environment
    from flintlock.testing.executor import ThreadExecutor

    executor = ThreadExecutor()
    environment.load_executor = lambda: executor  # type: ignore[assignment]


def run(unaligned: bool, args: argparse.Namespace, timeout_ms: int = 0) -> dict[str, Any]:
    out = tempfile.mkdtemp(prefix="flintlock-alignment-")
    config = Configuration().set_string("execution.checkpointing.dir", os.path.join(out, "chk"))
    config.set_string("execution.checkpointing.unaligned.enabled", str(unaligned).lower())
    config.set_string("execution.checkpointing.aligned-checkpoint-timeout", f"{timeout_ms} ms")
    config.set_string("restart-strategy.type", "none")
    env = StreamExecutionEnvironment.get_execution_environment(config)
    env.set_parallelism(args.parallelism)
    env.enable_checkpointing(args.interval_ms)
    (env.from_source(EndlessSource(), WatermarkStrategy.no_watermarks(), "numbers")
        .map(_padded).key_by(_key).map(_slow).sink_to(DiscardingSink()))
    client: Any = env.execute_async("checkpoint alignment benchmark")
    jm = client.jm
    if not jm.wait_until_running(120):
        raise RuntimeError("the job did not start")
    time.sleep(args.seconds)
    stats = jm.describe().checkpoints
    client.cancel()
    client.join(60) if hasattr(client, "join") else None
    done = [c for c in stats.history if c.status.name == "COMPLETED"]
    durations = sorted(c.end_to_end_duration_ms for c in done if c.end_to_end_duration_ms)
    return {
        "mode": f"alternating ({timeout_ms} ms)" if timeout_ms else (
            "unaligned" if unaligned else "aligned"),
        "completed": stats.num_completed,
        "failed": stats.num_failed,
        "in_progress_at_end": stats.num_in_progress,
        "durations_ms": [round(d, 1) for d in durations],
        "median_ms": round(statistics.median(durations), 1) if durations else None,
        "max_ms": round(max(durations), 1) if durations else None,
        "state_bytes": [c.state_size for c in done],
    }


def main(argv: list[str] | None = None) -> int:
    global SLOW_S
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--parallelism", type=int, default=2)
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--interval-ms", type=int, default=1000)
    parser.add_argument("--slow-ms", type=float, default=2.0)
    parser.add_argument("--mode", choices=("spark", "threads"), default="spark")
    parser.add_argument("--alternating-ms", type=int, default=0,
                        help="also run alternating checkpoints with this aligned timeout")
    args = parser.parse_args(argv)
    SLOW_S = args.slow_ms / 1000.0
    cloudpickle.register_pickle_by_value(sys.modules[__name__])
    if args.mode == "threads":
        _use_threads()
    load_before = os.getloadavg()
    results = [run(False, args), run(True, args)]
    if args.alternating_ms:
        results.append(run(True, args, args.alternating_ms))
    summary = {
        "parallelism": args.parallelism, "seconds": args.seconds,
        "interval_ms": args.interval_ms, "slow_ms": args.slow_ms, "mode": args.mode,
        "cpus": os.cpu_count(), "loadavg_before": load_before, "loadavg_after": os.getloadavg(),
        "results": results,
    }
    aligned, unaligned = (r["median_ms"] for r in results[:2])
    if aligned and unaligned:
        summary["aligned_over_unaligned"] = round(aligned / unaligned, 1)
    json.dump(summary, sys.stdout, indent=2)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
