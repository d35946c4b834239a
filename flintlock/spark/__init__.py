"""Runs a job graph on Spark; the only package that imports pyspark (DESIGN.md §6).

- ``session``: the active or embedded Spark application (a SparkContext), slot counting, the
  JM's address for TMs;
- ``launcher``: one job attempt's TaskManagers as a barrier stage, and failure translation;
- ``bootstrap``: what runs inside each barrier task (RPC connect, stdout forwarding, cleanup);
  ``collector``: the cycle collector's settings while a TaskManager process runs a job;
- ``errors``: typed errors; ``executor``: the DataStream API's entry to all of the above;
- ``class_data``: the class-data-sharing archive that starts the embedded driver JVM faster;
  ``gateway``: that JVM started from a cached launch command, without ``spark-submit``;
  ``py4j_converters``: PySpark's NumPy argument converters, kept from importing pandas;
  ``daemon``: the embedded session's Python daemon, with the TaskManager's modules imported;
- ``startup_probe``: ``python -m flintlock.spark.startup_probe`` measures start-up costs.

May import ``flintlock.common``, ``flintlock.graph`` and ``flintlock.runtime``; nothing imports
it except ``flintlock.datastream`` by name (so the API does not import pyspark).
"""
