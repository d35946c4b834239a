"""A test kit shipped with flintlock: clocks, in-memory transport, fault-injecting sources."""
