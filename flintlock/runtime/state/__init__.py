"""Keyed and operator state, key groups, state backends, snapshots and restore (DESIGN.md §5).

Entry points: ``factory.create_keyed_state_backend`` (``heap`` or ``rocksdb``),
``operator.OperatorStateBackend``, ``operator_snapshot.snapshot_operator`` (a snapshot's
synchronous part; its ``run`` is the asynchronous part), ``assignment.assign_states``
(rescaling), the picklable results in ``snapshots`` and the handles to what they wrote into
checkpoint storage (``handles``). docs/internals/state.md explains the design and records the
measurements behind it.

May import ``flintlock.common``, ``fsspec`` and ``rocksdict``; nothing else of the runtime
(tasks and the JobManager import this package, not the other way round).
"""
