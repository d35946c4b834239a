"""The embedded session's Python daemon: PySpark's, with the TaskManager's modules imported.

Spark starts one daemon per executor (``spark.python.daemon.module``) and forks every Python
worker from it. PySpark's own daemon imports almost nothing before forking; each worker then
imports ``pyspark.worker`` and, for a barrier task of flintlock, the TaskManager's modules
(about 0.2 s each, two workers at once on a 2-core machine, beside the driver JVM). This
daemon imports ``flintlock.spark.bootstrap`` (which imports the TaskManager) once, before
forking, so workers start with it in memory. (The bootstrap imports the TaskManager only when
a TaskManager runs, so that the driver does not.) It also imports ``flintlock.datastream``:
functions of a job's own modules are unpickled by importing those modules, which import the
user API (about 0.08 s per worker otherwise).

Importing these modules starts no thread (a thread would not survive the fork). The cycle
collector is off while they are imported (a full collection of everything PySpark and flintlock
made cost 30-40 ms of the daemon's 0.4 s) and what they made is frozen before the first fork
(``gc.freeze``): a forked worker's collections never visit those objects, which also keeps
their memory pages shared with the daemon instead of copied on the collector's writes.

Before anything imports PySpark, the daemon takes off its path the zips of PySpark and Py4J
that Spark put first when they copy the installed packages (``worker_path``): Python cannot
cache bytecode for a zip, so importing PySpark from it compiled every module, 0.6-0.8 s of
the first task of each session.

Used only by the session flintlock builds itself; run as ``python -m flintlock.spark.daemon``.
"""

from __future__ import annotations

import gc
import sys

from flintlock.spark.worker_path import installed_first

sys.path[:] = installed_first(sys.path)  # before PySpark is imported (see the module doc)
gc.disable()  # no collection while importing: every object made now lives as long as the daemon

from pyspark import daemon  # noqa: E402

# For the workers this daemon forks (see the module doc):
import flintlock.datastream  # noqa: E402  (the user API, which a job's own modules import)
import flintlock.runtime.taskmanager  # noqa: E402
import flintlock.spark.bootstrap  # noqa: E402, F401

gc.freeze()  # ... and no collection in a worker visits them (nor writes to their shared pages)
gc.enable()

if __name__ == "__main__":
    daemon.manager()
