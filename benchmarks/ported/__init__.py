"""The ported-jobs suite (issue #20, "The suite measures the jobs users write").

Four PyFlink-style jobs run through flintlock's public API on embedded Spark, each with and
without declared types at parallelism 1 and 2, next to the same work as a bare loop on one
core and as a Bytewax dataflow with 1 and 2 workers. ``benchmarks/ported_jobs.py`` is the
command; the modules here are its parts:

* ``functions``: the user code every engine calls (the same function objects);
* ``flintlock_jobs``, ``bare``, ``bytewax_flows``: the four jobs written for each engine;
* ``results``: generated input, canonical results and the checks against the bare loop;
* ``child``: one measurement in a fresh interpreter (also the Spark-only start-up baseline);
* ``report``: marginal rates, medians, the table, the JSON and the plot.

Imports flintlock's public API (``flintlock.common``, ``flintlock.datastream`` and its
connectors) and Bytewax; nothing from the runtime.
"""
