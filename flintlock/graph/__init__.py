"""Stream graph → job graph (operator chaining) → execution graph → slot assignment.

Pure data, no I/O. May import only ``flintlock.common``.
"""
