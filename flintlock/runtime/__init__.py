"""The streaming runtime: data exchange, checkpointing, state, tasks, TaskManager, JobManager.

May import ``flintlock.common``, ``flintlock.graph`` and ``flintlock.usercode``; never
``flintlock.datastream``, ``flintlock.spark`` or ``flintlock.cli``, and never pyspark.
"""
