"""Stream graph → job graph (operator chaining) → execution graph → slot assignment.

Pure data, no I/O. May import only ``flintlock.common``.

Modules, in pipeline order: ``stream_graph`` (what the DataStream API builds), ``job_graph``
(chaining; uses ``operator_ids`` for stable operator ids), ``execution_graph`` (subtasks,
partitions, gates; ``regions`` for pipelined regions), ``scheduling`` (slot sharing and the
allocation plan). ``errors`` holds every error this package raises. Design decisions are in
``docs/internals/graph.md``.
"""
