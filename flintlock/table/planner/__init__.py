"""Planning: a logical plan (``flintlock.table.plan``) becomes DataStream transformations.

``translate`` walks the plan bottom-up and builds, for each node, the DataStream of its rows
(``Row`` objects carrying their ``RowKind``): compiled projections and filters as map and
filter functions, group aggregations, joins, Top-N and deduplication as keyed process
functions of ``flintlock.datastream.changelog``, connectors through their factories. May import
``flintlock.common``, ``flintlock.datastream`` and the rest of ``flintlock.table``.
"""
