"""Data exchange between subtasks (DESIGN.md §4): buffers and pools, record serialization,
record writers and channel selectors, result partitions, input gates and channels, credit-based
flow control, the wire protocol and the TCP transport (one connection per TaskManager pair),
and the in-band events that travel with the records (``barriers``: checkpoint barriers,
cancellation markers, end of partition; ``event_time``: watermarks).

May import ``flintlock.common``, ``flintlock.runtime.state.keygroups`` and the connection
helpers both planes share, which sit below them: ``flintlock.runtime.auth`` (the job-secret
handshake), ``flintlock.runtime.admission`` (the cap on unauthenticated connections),
``flintlock.runtime.tls`` (issue 14) and ``flintlock.runtime.liveness`` (keepalives).
"""
