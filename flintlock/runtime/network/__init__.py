"""Data exchange between subtasks (DESIGN.md §4): buffers and pools, record serialization,
record writers and channel selectors, result partitions, input gates and channels, credit-based
flow control, the wire protocol and the TCP transport (one connection per TaskManager pair).

May import ``flintlock.common`` and ``flintlock.runtime.state.keygroups`` only.
"""
