"""Table connectors: how a catalog table's ``'connector'`` option becomes a source or a sink
on the DataStream runtime (Flink's dynamic table factories).

A factory module registers itself in ``registry.FACTORIES`` under its identifier
(``datagen``, ``print``, ``blackhole``, ``filesystem``, ``kafka``). Sources produce ``Row``s
whose values are the table's physical columns in order, with their ``RowKind``; sinks consume
rows of the query's schema. The planner calls ``registry.Connectors``; nothing here plans.
"""
