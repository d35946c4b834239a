"""Syntax nodes that Flink SQL has and sqlglot does not: flintlock's additions to sqlglot's tree.

Each is an ordinary ``sqlglot.exp.Expression`` subclass, so tree walking (``find_all``,
``walk``, ``copy``, equality) works on them as on sqlglot's own nodes; the Flink dialect's
generator prints them back as Flink SQL. The parser (``dialect.FlinkParser``) is their only
producer; the binder reads them.
"""

from __future__ import annotations

from sqlglot import exp


class TypedLiteral(exp.Expression):
    """``DATE '2020-01-01'``, ``TIME '10:00:00'``, ``TIMESTAMP '2020-01-01 00:00:00'``,
    ``TIMESTAMP_LTZ '...'``: ``this`` is the string literal, ``to`` an ``exp.DataType`` whose
    ``kind`` is the type keyword as Flink spells it (``'TIMESTAMP'``). Kept apart from
    ``CAST('...' AS TIMESTAMP)`` because Flink types the literal by its text (a
    ``TIMESTAMP '... 00:00:00'`` is ``TIMESTAMP(0)``, the cast ``TIMESTAMP(6)``)."""

    arg_types = {"this": True, "to": True}


class TableArgument(exp.Expression):
    """A table passed to a table-valued function: ``TABLE t`` in
    ``TUMBLE(TABLE t, DESCRIPTOR(ts), ...)``. ``this`` is the ``exp.Table``; ``partition_by``
    the columns of ``TABLE t PARTITION BY k`` (the session window's form), else absent."""

    arg_types = {"this": True, "partition_by": False}
