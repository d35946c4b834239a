"""Two costs on the embedded session's start-up path, measured alone, without a Spark session.

* ``first-call``: the CPU a fresh driver spends in Py4J's conversion of the first argument it
  sends the JVM (``SparkConf(_jvm=...)`` inside ``SparkContext.__init__``, the JVM waiting):
  PySpark's converters asked about one string, as Py4J asks them, with PySpark's NumPy
  converters as registered (``plain``) and behind ``flintlock.spark.py4j_converters``
  (``guarded``); also how many modules are loaded after it.
* ``launcher``: what ``spark-submit`` runs before the driver JVM — its shell steps and Spark's
  launcher JVM, which only prints the driver's command line (``flintlock.spark.gateway._probe``
  runs exactly those) — CPU (reaped children) and wall seconds.

Each ``first-call`` sample is a fresh interpreter; the two kinds alternate. Medians [min .. max].

    .venv/bin/python benchmarks/startup_parts.py [--rounds 8]
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time

_FIRST_CALL = """
import sys, time
import pyspark  # registers PySpark's Py4J converters
from py4j import protocol
if sys.argv[1] == "guarded":
    from flintlock.spark.py4j_converters import guard_numpy_converters
    guard_numpy_converters()
started = time.process_time()
for converter in protocol.INPUT_CONVERTER:
    converter.can_convert("spark.master")
print(time.process_time() - started, len(sys.modules))
"""
_SETTINGS = [("spark.master", "local[2]"), ("spark.driver.host", "127.0.0.1"),
             ("spark.driver.extraJavaOptions", "-XX:TieredStopAtLevel=1")]


def _summary(values: list[float]) -> str:
    return f"{statistics.median(values):.4f} [{min(values):.4f} .. {max(values):.4f}]"


def first_call(rounds: int) -> None:
    found: dict[str, list[tuple[float, int]]] = {"plain": [], "guarded": []}
    for _ in range(rounds):
        for kind in found:
            out = subprocess.run([sys.executable, "-c", _FIRST_CALL, kind], check=True,
                                 capture_output=True, text=True).stdout.split()
            found[kind].append((float(out[0]), int(out[1])))
    for kind, samples in found.items():
        print(f"first Py4J argument, {kind:8} CPU s {_summary([s[0] for s in samples])}, "
              f"modules loaded {samples[0][1]}")


def launcher(rounds: int) -> None:
    from pyspark.find_spark_home import _find_spark_home

    from flintlock.spark import gateway

    home = _find_spark_home()
    environ = {k: v for k, v in os.environ.items() if k != "SPARK_HOME"}
    cpu, wall = [], []
    for _ in range(rounds):
        usage = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.monotonic()
        gateway._probe(home, _SETTINGS, environ)
        wall.append(time.monotonic() - started)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu.append(after.ru_utime + after.ru_stime - usage.ru_utime - usage.ru_stime)
    print(f"spark-submit's steps and launcher JVM: CPU s {_summary(cpu)}, wall s "
          f"{_summary(wall)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=8)
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.2f}")
    first_call(args.rounds)
    launcher(args.rounds)
    print(f"load average {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
