"""The cycle collector of a TaskManager process while it runs a job.

Design note. A streaming job allocates container objects at the rate of its records: a tuple
per record out of every ``map``, lists per batch, the codec's columns. Almost all of them die
young, by reference count, so the cycle collector finds nothing in them; it still runs. CPython
starts a young collection whenever 700 more containers were allocated than freed, and a batch
of a few thousand tuples crosses that inside one operator call. Each young collection promotes
what is alive (the batch in flight) a generation up, which soon makes a full collection due, and
a full collection visits every object of the process: PySpark, py4j, flintlock, the job's
modules. Measured on the word count of ``benchmarks/ported_jobs.py`` (TaskManagers as threads,
one process, 1 M words): 3,600 collections took 0.49 s of a 1.6 s run with declared types,
ten of them full ones at 26 ms each; without declared types 0.28 s.

So while a job runs, a TaskManager process (``tuned_collector``):

* freezes what exists when the job starts (``gc.freeze``): modules, the runtime, the job's
  code; full collections no longer visit them;
* starts young collections only after ``flintlock.python.gc.young-threshold`` (default
  50,000) net allocations, which a batch in flight never reaches; cyclic garbage is still
  collected, just in fewer, larger rounds;
* at the end restores the thresholds and unfreezes, so that a reused Spark worker collects the
  job's leftovers as before (the leaked-loader check depends on that collection).

A worker forked from flintlock's daemon (``daemon``) starts with the daemon's imports already
frozen; there the job neither freezes nor unfreezes (``gc.unfreeze`` is all or nothing): it
would unfreeze the daemon's objects too, and the reused worker's next full collection would
write to their pages, copying them out of the memory it shares with the daemon (14 MB a
worker, measured by forking a frozen process: docs/known-issues.md, "Memory of a long-lived
process running many jobs"). The runtime and PySpark are already among the frozen objects.

``flintlock.python.gc.tuned: false`` leaves CPython's defaults alone.

Owned by the thread that runs the TaskManager's main (the process's one TaskManager); the
collector's settings are process-wide.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

from flintlock.common.config import Configuration
from flintlock.common.options import python as python_options


@contextmanager
def tuned_collector(config: Configuration) -> Iterator[None]:
    """Runs the block under the job's collector settings (see the module doc)."""
    if not config.get(python_options.GC_TUNED):
        yield
        return
    thresholds = gc.get_threshold()
    freezing = gc.get_freeze_count() == 0  # else forked from a daemon that froze (module doc)
    if freezing:
        gc.freeze()
    gc.set_threshold(config.get(python_options.GC_YOUNG_THRESHOLD), *thresholds[1:])
    try:
        yield
    finally:
        gc.set_threshold(*thresholds)
        if freezing:
            gc.unfreeze()
