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

Importing these modules starts no thread (a thread would not survive the fork). Used only by
the session flintlock builds itself; run as ``python -m flintlock.spark.daemon``.
"""

from __future__ import annotations

from pyspark import daemon

# For the workers this daemon forks (see the module doc):
import flintlock.datastream  # the user API, which a job's own modules import (by reference)
import flintlock.runtime.taskmanager
import flintlock.spark.bootstrap  # noqa: F401

if __name__ == "__main__":
    daemon.manager()
