"""Data exchange between subtasks (DESIGN.md §4): buffers and pools, record serialization,
record writers and channel selectors, result partitions, input gates and channels, credit-based
flow control, the wire protocol and the TCP transport (one connection per TaskManager pair).

May import ``flintlock.common``, ``flintlock.runtime.state.keygroups`` and the connection
security both planes share, which sits below them: ``flintlock.runtime.auth`` (the job-secret
handshake), ``flintlock.runtime.admission`` (the cap on unauthenticated connections) and
``flintlock.runtime.tls`` (issue 14).
"""
