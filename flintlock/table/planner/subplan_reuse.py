"""Sub-plan reuse: a sub-plan written twice in one job is built once (issue 33).

Flink's optimizer finds the sub-plans of a job whose digests are equal and builds each once,
its output read by every consumer (``table.optimizer.reuse-sub-plan-enabled``, on by default):
Nexmark's q5 computes the same HOP window count per auction on both sides of its join, and
Flink reads the bids and counts them once. ``Translator.stream`` builds a node's stream once
per ``reuse_key``: equal keys, one stream.

``ReuseKeys.of(node)`` is a structural key: the node's class and every field, plan-node inputs
by their own keys, expressions by ``Rex.key()`` (data types by their SQL text), plain values
by type and value, dataclasses field by field, other objects (a user's function, a
DataStream) by identity — equal keys mean the same computation over the same inputs. What is
never shared (the node's own identity is its key): a sink (every INSERT writes), a node
calling a function whose value depends on when or how often it is called (``RAND``,
``UUID``, ``NOW``, ``PROCTIME``, ...) or a user function that says it is not deterministic,
and a group aggregation told to leave out UPDATE_BEFORE when the other is not (the flag is
part of the key). Pure function of the plan; one ``ReuseKeys`` per translation.
"""

from __future__ import annotations

import dataclasses
import decimal
import enum
from collections.abc import Hashable, Mapping
from typing import Any

from flintlock.table.plan import nodes as n
from flintlock.table.plan.rex import Call, Rex, UdfCall
from flintlock.table.plan.type_rules import type_key
from flintlock.table.types import DataType

NONDETERMINISTIC = frozenset({"RAND", "RAND_INTEGER", "UUID", "NOW", "CURRENT_TIMESTAMP",
                              "LOCALTIMESTAMP", "CURRENT_DATE", "CURRENT_TIME", "LOCALTIME",
                              "UNIX_TIMESTAMP", "PROCTIME", "CURRENT_ROW_TIMESTAMP",
                              "CURRENT_WATERMARK"})
"""Functions whose every call may give another value: a sub-plan calling one is its own."""

_PLAIN = (type(None), bool, int, float, str, bytes, decimal.Decimal, enum.Enum)


class _Own(Exception):
    """Raised inside a key's computation: the node keeps its identity as its key."""


class ReuseKeys:
    """The reuse keys of one translation's plan nodes (memoized by node identity; the plan
    must outlive this object, as it does a ``Translator``)."""

    def __init__(self, no_update_before: frozenset[int] = frozenset(),
                 enabled: bool = True) -> None:
        self.no_update_before = no_update_before
        self.enabled = enabled
        self._keys: dict[int, Hashable] = {}

    def of(self, node: n.PlanNode) -> Hashable:
        key = self._keys.get(id(node))
        if key is None:
            key = ("node", id(node))
            if self.enabled and not isinstance(node, n.Sink):
                try:
                    key = ("plan", type(node).__qualname__, id(node) in self.no_update_before,
                           self._fields(node))
                except _Own:
                    pass
            self._keys[id(node)] = key
        return key

    def _fields(self, value: Any) -> tuple[Hashable, ...]:
        return tuple(self._value(getattr(value, f.name)) for f in dataclasses.fields(value))

    def _value(self, value: Any) -> Hashable:
        if isinstance(value, n.PlanNode):
            return self.of(value)
        if isinstance(value, Rex):
            _refuse_nondeterministic(value)
            return ("rex", value.key())
        if isinstance(value, _PLAIN):
            return (type(value).__qualname__, value)
        if isinstance(value, DataType):
            return ("type", type_key(value))
        if isinstance(value, (tuple, list)):
            return (type(value).__qualname__, tuple(self._value(v) for v in value))
        if isinstance(value, (frozenset, set)):
            return ("set", frozenset(self._value(v) for v in value))
        if isinstance(value, Mapping):
            return ("map", tuple((self._value(k), self._value(v)) for k, v in value.items()))
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            return (type(value).__qualname__, self._fields(value))
        deterministic = getattr(value, "is_deterministic", None)
        if callable(deterministic) and not deterministic():
            raise _Own()
        return ("object", id(value))


def _refuse_nondeterministic(rex: Rex) -> None:
    if isinstance(rex, UdfCall):
        deterministic = getattr(rex.function, "is_deterministic", None)
        if callable(deterministic) and not deterministic():
            raise _Own()
    elif isinstance(rex, Call) and rex.function.upper() in NONDETERMINISTIC:
        raise _Own()
    for operand in getattr(rex, "operands", ()):
        _refuse_nondeterministic(operand)
