"""Keyed and operator state, key groups, state backends, snapshots and restore (DESIGN.md §5).

Entry points: ``factory.create_keyed_state_backend`` (``heap`` or ``rocksdb``),
``operator.OperatorStateBackend``, ``operator_snapshot.snapshot_operator`` (a snapshot's
synchronous part; its ``run`` is the asynchronous part), ``assignment.assign_states``
(rescaling), and the picklable results in ``snapshots``. docs/internals/state.md explains the
design and records the measurements behind it.

May import ``flintlock.common``, ``flintlock.runtime.checkpoint.handles``, ``fsspec`` and
``rocksdict``; nothing else of the runtime (tasks and the JobManager import this package, not
the other way round).
"""
