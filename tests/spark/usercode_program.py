"""A driver program for ``test_user_code_on_spark``: runs several jobs on one embedded Spark
session and prints one JSON line per job with what its operators saw.

Run as a script with the work directory (prepared by the test) as its argument and the
"installed" directory on ``PYTHONPATH``, so that the driver, Spark's Python daemon and every
worker have those modules as installed ones. Each job's own versions are shipped with
``env.add_python_file``; its functions import only inside their bodies or through globals
captured here, never at this module's top level.
"""

from __future__ import annotations

import json
import logging
import os
import sys

from flintlock.common import Types
from flintlock.common.config import Configuration
from flintlock.datastream import StreamExecutionEnvironment

WORK = sys.argv[1]


class _Retirements(logging.Handler):
    """Collects the driver's warnings about retired workers."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        if "ends instead of being reused" in record.getMessage():
            self.messages.append(record.getMessage())


RETIREMENTS = _Retirements()
logging.getLogger("flintlock.spark.launcher").addHandler(RETIREMENTS)


def environment(name: str, options: dict[str, str] | None = None) -> StreamExecutionEnvironment:
    config = Configuration()
    config.set_string("execution.checkpointing.dir", os.path.join(WORK, "chk", name))
    config.set_string("flintlock.python.dependencies-dir", os.path.join(WORK, "deps"))
    for key, value in (options or {}).items():
        config.set_string(key, value)
    env = StreamExecutionEnvironment.get_execution_environment(config)
    env.set_parallelism(2)
    return env


def versions_in_body(x: int) -> str:
    import colorsys  # standard library: never shadowed by the shipped colorsys.py

    import pfa
    import pfb
    import pfd
    import probe_mod
    return json.dumps({
        "body": probe_mod.VERSION, "pfa": pfa.VERSION, "pfb": pfb.VERSION, "pfd": pfd.VERSION,
        "colorsys_shipped": hasattr(colorsys, "SHIPPED"), "pid": os.getpid()})


def resolve_order_job(order: str) -> None:
    import probe_mod  # the installed one here, on the driver
    from probe_mod import version as captured_function

    captured_module = probe_mod

    def through_globals(x: int) -> str:
        return json.dumps({"module": captured_module.VERSION, "function": captured_function()})

    env = environment(f"order-{order}", {
        "classloader.resolve-order": order,
        "classloader.parent-first-patterns.additional": "pfa.;pfb",
        "classloader.parent-first-patterns.default": "flintlock.;pyspark.;py4j.;cloudpickle.;pfd.",
    })
    env.add_python_file(os.path.join(WORK, "shipped"))
    numbers = env.from_collection(list(range(8))).rebalance()
    body = numbers.map(versions_in_body, output_type=Types.STRING())
    globals_ = numbers.map(through_globals, output_type=Types.STRING())
    with body.union(globals_).execute_and_collect(f"resolve order {order}") as rows:
        seen = [json.loads(row) for row in rows]
    print(json.dumps({"job": f"order-{order}", "rows": seen}), flush=True)


def version_of_the_day(x: int) -> list[int | str]:
    import probe_mod
    return [probe_mod.VERSION, os.getpid()]


def start_a_thread(x: int) -> list[int | str]:
    import leaky
    leaky.start(os.path.join(WORK, "leaked"))
    return ["started", os.getpid()]


def successive_job(name: str, directory: str, function) -> list:
    env = environment(name)
    env.add_python_file(os.path.join(WORK, directory))
    types = Types.LIST(Types.STRING())
    rows = env.from_collection(list(range(8))).rebalance().map(
        lambda x: [str(v) for v in function(x)], output_type=types)
    with rows.execute_and_collect(name) as results:
        return list(results)


def reuse_jobs() -> None:
    first = successive_job("first", "v1", version_of_the_day)
    second = successive_job("second", "v2", version_of_the_day)
    leaking = successive_job("leaking", "leak", start_a_thread)
    after = successive_job("after", "v1", version_of_the_day)
    print(json.dumps({"job": "reuse", "first": first, "second": second, "leaking": leaking,
                      "after": after, "retirements": RETIREMENTS.messages}), flush=True)


if __name__ == "__main__":
    resolve_order_job("child-first")
    resolve_order_job("parent-first")
    reuse_jobs()
