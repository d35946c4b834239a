"""Runs every benchmark, one after the other (``make bench``).

Each benchmark is a separate program with its own options (see benchmarks/README.md); this
runs them all with their defaults, each in a fresh interpreter, and prints their output under
a heading. Run it on a quiet machine: the figures go into docs/benchmarks.md by hand, with
the command, the machine and the date.

    .venv/bin/python -m benchmarks.run [--only NAME ...]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time

BENCHMARKS = {
    "ported_jobs": ["-m", "benchmarks.ported_jobs"],
    "local_exchange": ["benchmarks/local_exchange.py"],
    "exchange_throughput": ["benchmarks/exchange_throughput.py"],
    "exchange_latency": ["benchmarks/exchange_latency.py"],
    "keyed_writer": ["benchmarks/keyed_writer.py"],
    "state_backends": ["benchmarks/state_backends.py", "--only", "hotpath"],
    "keyed_count": ["-m", "benchmarks.keyed_count", "--warmup"],
    "keyed_count_checkpointed": ["-m", "benchmarks.keyed_count", "--warmup", "--keys",
                                 "100000", "--checkpoint-ms", "1000"],
    "checkpoint_alignment": ["-m", "benchmarks.checkpoint_alignment"],
    "runtime_costs": ["-m", "benchmarks.runtime_costs"],
    "startup": ["benchmarks/startup.py"],
    "event_time": ["-m", "benchmarks.event_time"],
    "stage_costs": ["-m", "benchmarks.stage_costs"],
    "event_time_stages": ["-m", "benchmarks.event_time_stages"],
    "types_matrix": ["-m", "benchmarks.types_matrix"],
    "warm_start": ["-m", "benchmarks.warm_start"],
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", nargs="*", choices=sorted(BENCHMARKS))
    args = parser.parse_args(argv)
    failed = []
    for name in args.only or list(BENCHMARKS):
        print(f"\n=== {name}: {' '.join(BENCHMARKS[name])}", flush=True)
        started = time.monotonic()
        code = subprocess.call([sys.executable, *BENCHMARKS[name]])
        print(f"=== {name}: exit {code} after {time.monotonic() - started:.0f} s", flush=True)
        if code:
            failed.append(name)
    if failed:
        print(f"failed: {', '.join(failed)}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
