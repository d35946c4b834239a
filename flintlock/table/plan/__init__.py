"""The logical plan: typed relational operators (``nodes``), resolved row expressions (``rex``),
the built-in functions (``functions``), name resolution (``resolver``, ``sql_binder``) and the
changelog-mode pass (``changelog``). Pure data and pure functions; nothing runs here.

May import ``flintlock.common`` and the Table layer's own ``types``, ``schema``, ``errors`` and
``sql`` front end; never ``planner`` (which imports this package) nor the DataStream API.
"""
