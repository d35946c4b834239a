"""Changelog-aware relational operators for the Table API and SQL (issue 28): group
aggregation with retraction and its built-in aggregate functions, regular joins, Top-N and
deduplication, as keyed process functions over ``Row``s carrying a ``RowKind``. They emit
exactly the changelog Flink 2.x's operators emit without mini-batch, and keep all their state
in keyed state (checkpointed, rescalable, exactly-once).

May import ``flintlock.common`` and ``flintlock.datastream``; never ``flintlock.table`` (the
planner above instantiates these operators) nor the runtime. docs/table.md, "Changelog
operators", lists every operator's constructor arguments.
"""
