"""Resolved row expressions: what a projection, filter or aggregate argument computes from one
input row, with its SQL type.

Four kinds, frozen and comparable (equal expressions are computed once by the compiler):
``InputRef`` (field ``index`` of the input row), ``Literal`` (a Python value of a SQL type),
``Call`` (a built-in function by its upper-case SQL name, see ``functions``) and ``UdfCall`` (a
user's scalar function object). Types are ``flintlock.table.types`` DataTypes, compared by their
SQL spelling. No evaluation here: ``codegen`` turns expressions into Python source.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from flintlock.table.plan.type_rules import type_key
from flintlock.table.types import DataType


@dataclass(frozen=True, slots=True, eq=False)
class Rex:
    """Base of the resolved expressions; ``type`` is the result's SQL type."""

    type: DataType

    def key(self) -> tuple[Any, ...]:
        """A value that equal expressions share (DataTypes compare by their SQL text)."""
        raise NotImplementedError

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Rex) and self.key() == other.key()

    def __hash__(self) -> int:
        return hash(self.key())


@dataclass(frozen=True, slots=True, eq=False)
class InputRef(Rex):
    index: int = 0

    def key(self) -> tuple[Any, ...]:
        return ("ref", self.index)


@dataclass(frozen=True, slots=True, eq=False)
class Literal(Rex):
    value: Any = None

    def key(self) -> tuple[Any, ...]:
        return ("lit", type(self.value).__name__, repr(self.value), type_key(self.type))


@dataclass(frozen=True, slots=True, eq=False)
class Call(Rex):
    function: str = ""
    operands: tuple[Rex, ...] = ()
    options: tuple[Any, ...] = field(default=())
    """Non-expression arguments the function needs at compile time (a JSON path, a unit)."""

    def key(self) -> tuple[Any, ...]:
        return ("call", self.function, tuple(o.key() for o in self.operands),
                repr(self.options), type_key(self.type))


@dataclass(frozen=True, slots=True, eq=False)
class UdfCall(Rex):
    """A user-defined scalar function; ``function`` is the user's object (called per row)."""

    function: Any = None
    name: str = ""
    operands: tuple[Rex, ...] = ()

    def key(self) -> tuple[Any, ...]:
        return ("udf", id(self.function), tuple(o.key() for o in self.operands))


def input_refs(expression: Rex) -> set[int]:
    """The input fields an expression reads."""
    if isinstance(expression, InputRef):
        return {expression.index}
    if isinstance(expression, (Call, UdfCall)):
        found: set[int] = set()
        for operand in expression.operands:
            found |= input_refs(operand)
        return found
    return set()


def shift(expression: Rex, offset: int) -> Rex:
    """The same expression over a row whose fields start ``offset`` later (joins)."""
    if isinstance(expression, InputRef):
        return InputRef(expression.type, expression.index + offset)
    if isinstance(expression, Call):
        return Call(expression.type, expression.function,
                    tuple(shift(o, offset) for o in expression.operands), expression.options)
    if isinstance(expression, UdfCall):
        return UdfCall(expression.type, expression.function, expression.name,
                       tuple(shift(o, offset) for o in expression.operands))
    return expression


def remap(expression: Rex, mapping: dict[int, Rex]) -> Rex:
    """Input references replaced by the expressions ``mapping`` gives (merging projections)."""
    if isinstance(expression, InputRef):
        return mapping[expression.index]
    if isinstance(expression, Call):
        return Call(expression.type, expression.function,
                    tuple(remap(o, mapping) for o in expression.operands), expression.options)
    if isinstance(expression, UdfCall):
        return UdfCall(expression.type, expression.function, expression.name,
                       tuple(remap(o, mapping) for o in expression.operands))
    return expression
