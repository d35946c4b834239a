"""Flink's built-in aggregate functions with retraction, as objects the group aggregation runs.

Every function has PyFlink's ``AggregateFunction`` protocol — ``create_accumulator()``,
``accumulate(acc, *args)``, ``retract(acc, *args)``, ``merge(acc, others)``,
``get_value(acc)`` — so a user's aggregate function and a built-in are called alike. The
accumulator is a small picklable list that the methods change in place (it lives in a
``ValueState``). SQL null semantics: null arguments are skipped; a function over no (or no
longer any) non-null value returns null, except COUNT (0) and SUM0 (zero).

Each built-in also carries an ``Inline``: the same logic as Python source templates, which
``group_agg`` compiles into one function per operator instead of calling the methods per
record (Flink's generated ``AggsHandleFunction``, in Python). The templates and the methods
must agree: ``tests/table/test_changelog_aggregates.py`` checks both against each other.
Template placeholders: ``{a0}``, ``{a1}``... the accumulator slots; ``{x0}``, ``{x1}``... the
argument expressions; ``{nonnull}`` "every argument is not None"; ``{t}`` a prefix for
temporaries; ``{f}`` the function object. A function without an inline form (the MIN/MAX with
retraction, LISTAGG, ...) keeps its accumulator in one slot and is called through its methods.

Result types, as Flink's planner types them (the planner declares them; values here are
Python's): COUNT -> BIGINT NOT NULL; SUM of an integral type -> the same type (``Sum(bits=32)``
wraps like Java's int), of DECIMAL(p, s) -> DECIMAL(38, s), of DOUBLE -> DOUBLE; SUM0 the same,
never null; AVG of an integral type -> the same integral type (the quotient truncated toward
zero, as Java divides), of DOUBLE -> DOUBLE, of DECIMAL -> DECIMAL rounded half up to the
result scale; MIN/MAX/FIRST_VALUE/LAST_VALUE -> the argument's type; LISTAGG -> STRING;
COLLECT -> MULTISET (a dict value -> count). BOOL_AND/BOOL_OR are MIN/MAX over booleans.
Retraction more than was accumulated never happens on a consistent changelog; the functions
then behave as Flink's do where that is cheap, and are otherwise unspecified.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from flintlock.datastream.changelog.errors import ChangelogError, InvalidOperatorArgumentError


class RetractionNotSupportedError(ChangelogError, TypeError):
    """A retraction reached an aggregate function that has no retraction (the planner must
    pick the retracting variant for an updating input)."""

    def __init__(self, function: str) -> None:
        super().__init__(function)
        self.function = function

    def __str__(self) -> str:
        return (f"{self.function} received a retraction but does not support retraction; "
                "use its with-retraction variant (retract=True) for an updating input")


@dataclass(frozen=True, slots=True)
class Inline:
    """Source templates of one aggregate function (see the module docstring)."""

    slots: tuple[str, ...]
    accumulate: str
    retract: str
    value: str


class BuiltInAggregate:
    """Base of the built-ins: a name for errors and an optional ``inline`` form."""

    name = "AGG"
    inline: Inline | None = None

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and vars(self) == vars(other)

    def __hash__(self) -> int:
        return hash(type(self))

    def merge(self, acc: list[Any], others: Any) -> None:
        for other in others:
            self._merge_one(acc, other)

    def _merge_one(self, acc: list[Any], other: list[Any]) -> None:
        raise InvalidOperatorArgumentError(self.name, "merge is not supported")


def wrap_integer(value: int, bits: int) -> int:
    """``value`` as a Java integer of ``bits`` bits (two's complement overflow)."""
    half = 1 << (bits - 1)
    return ((value + half) % (half << 1)) - half


# -- COUNT ---------------------------------------------------------------------------------


class Count1(BuiltInAggregate):
    """COUNT(*): every row counts."""

    name = "COUNT(*)"
    inline = Inline(("0",), "{a0} += 1", "{a0} -= 1", "{a0}")

    def create_accumulator(self) -> list[Any]:
        return [0]

    def accumulate(self, acc: list[Any], *args: Any) -> None:
        acc[0] += 1

    def retract(self, acc: list[Any], *args: Any) -> None:
        acc[0] -= 1

    def _merge_one(self, acc: list[Any], other: list[Any]) -> None:
        acc[0] += other[0]

    def get_value(self, acc: list[Any]) -> int:
        return acc[0]  # type: ignore[no-any-return]


class Count(BuiltInAggregate):
    """COUNT(x[, y...]): rows whose arguments are all non-null."""

    name = "COUNT"
    inline = Inline(("0",), "if {nonnull}:\n    {a0} += 1", "if {nonnull}:\n    {a0} -= 1",
                    "{a0}")

    def create_accumulator(self) -> list[Any]:
        return [0]

    def accumulate(self, acc: list[Any], *args: Any) -> None:
        if None not in args:
            acc[0] += 1

    def retract(self, acc: list[Any], *args: Any) -> None:
        if None not in args:
            acc[0] -= 1

    def _merge_one(self, acc: list[Any], other: list[Any]) -> None:
        acc[0] += other[0]

    def get_value(self, acc: list[Any]) -> int:
        return acc[0]  # type: ignore[no-any-return]


# -- SUM, SUM0, AVG ------------------------------------------------------------------------


def _in_range(bits: int) -> str:
    """The inline value of a wrapped sum: the total itself while it fits in ``bits`` (no call
    per row), else ``{f}.wrap`` of it."""
    half = 1 << (bits - 1)
    return f"({{a0}} if {-half} <= {{a0}} < {half} else {{f}}.wrap({{a0}}))"


_SUM_ACCUMULATE = "{t}v = {x0}\nif {t}v is not None:\n    {a0} += {t}v\n    {a1} += 1"
_SUM_RETRACT = "{t}v = {x0}\nif {t}v is not None:\n    {a0} -= {t}v\n    {a1} -= 1"


class _SumAndCount(BuiltInAggregate):
    """The accumulator SUM and AVG share: [total of the non-null values, their number]."""

    def create_accumulator(self) -> list[Any]:
        return [0, 0]

    def accumulate(self, acc: list[Any], value: Any) -> None:
        if value is not None:
            acc[0] += value
            acc[1] += 1

    def retract(self, acc: list[Any], value: Any) -> None:
        if value is not None:
            acc[0] -= value
            acc[1] -= 1

    def _merge_one(self, acc: list[Any], other: list[Any]) -> None:
        acc[0] += other[0]
        acc[1] += other[1]


class Sum(_SumAndCount):
    """SUM(x): null while no non-null value is aggregated (also after retracting them all).
    ``bits`` (32 for INT, 64 for BIGINT, 16/8 for SMALLINT/TINYINT) wraps the result as
    Java's integer arithmetic overflows; None keeps Python's exact integers (and DECIMAL,
    DOUBLE)."""

    name = "SUM"

    def __init__(self, bits: int | None = None) -> None:
        if bits is not None and bits not in (8, 16, 32, 64):
            raise InvalidOperatorArgumentError("SUM", f"bits must be 8, 16, 32 or 64, got {bits}")
        self.bits = bits
        value = "({a0} if {a1} else None)" if bits is None else (
            f"({_in_range(bits)} if {{a1}} else None)")
        self.inline = Inline(("0", "0"), _SUM_ACCUMULATE, _SUM_RETRACT, value)

    def wrap(self, total: int) -> int:
        return total if self.bits is None else wrap_integer(total, self.bits)

    def get_value(self, acc: list[Any]) -> Any:
        return self.wrap(acc[0]) if acc[1] else None


class Sum0(BuiltInAggregate):
    """SUM0(x) (``$SUM0``, what the planner uses for a SUM that must not be null): ``zero``
    (0, 0.0 or Decimal(0), the argument type's zero) when nothing is aggregated."""

    name = "SUM0"

    def __init__(self, zero: Any = 0, bits: int | None = None) -> None:
        if bits is not None and bits not in (8, 16, 32, 64):
            raise InvalidOperatorArgumentError("SUM0", f"bits must be 8, 16, 32 or 64, got {bits}")
        self.zero = zero
        self.bits = bits
        value = "{a0}" if bits is None else _in_range(bits)
        self.inline = Inline(("{f}.zero",), "{t}v = {x0}\nif {t}v is not None:\n    {a0} += {t}v",
                             "{t}v = {x0}\nif {t}v is not None:\n    {a0} -= {t}v", value)

    def create_accumulator(self) -> list[Any]:
        return [self.zero]

    def accumulate(self, acc: list[Any], value: Any) -> None:
        if value is not None:
            acc[0] += value

    def retract(self, acc: list[Any], value: Any) -> None:
        if value is not None:
            acc[0] -= value

    def _merge_one(self, acc: list[Any], other: list[Any]) -> None:
        acc[0] += other[0]

    def wrap(self, total: int) -> int:
        return total if self.bits is None else wrap_integer(total, self.bits)

    def get_value(self, acc: list[Any]) -> Any:
        return self.wrap(acc[0])


_AVG_KINDS = ("integral", "float", "decimal")
_AVG_ALIASES = {"int": "integral", "double": "float"}


class Avg(_SumAndCount):
    """AVG(x): null over no non-null value. ``kind`` is the argument's type family:
    "integral" or "int" (TINYINT..BIGINT: the result keeps the type, the quotient truncated toward
    zero as Java's long division), "float" or "double" (FLOAT/DOUBLE) or "decimal" (half up to
    ``scale`` digits, the result type's scale; Flink's is max(6, the argument's scale))."""

    name = "AVG"

    def __init__(self, kind: str = "float", scale: int = 6) -> None:
        kind = _AVG_ALIASES.get(kind, kind)
        if kind not in _AVG_KINDS:
            raise InvalidOperatorArgumentError("AVG", f"kind must be one of {_AVG_KINDS}, "
                                               f"got {kind!r}")
        self.kind = kind
        self.scale = scale
        self._quantum = Decimal(1).scaleb(-scale)
        self.inline = Inline(("0", "0"), _SUM_ACCUMULATE, _SUM_RETRACT,
                             "({f}.quotient({a0}, {a1}) if {a1} else None)")

    def quotient(self, total: Any, count: int) -> Any:
        if self.kind == "integral":
            magnitude = abs(total) // count
            return magnitude if total >= 0 else -magnitude
        if self.kind == "decimal":
            return (Decimal(total) / count).quantize(self._quantum, rounding=ROUND_HALF_UP)
        return total / count

    def get_value(self, acc: list[Any]) -> Any:
        return self.quotient(acc[0], acc[1]) if acc[1] else None


# -- MIN, MAX over insert-only input; FIRST_VALUE, LAST_VALUE -------------------------------


class _InsertOnly(BuiltInAggregate):
    def retract(self, acc: list[Any], *args: Any) -> None:
        raise RetractionNotSupportedError(self.name)


_NO_RETRACT = "raise {f}.no_retraction()"


class Min(_InsertOnly):
    """MIN(x) over an insert-only input (``MinWithRetract`` for an updating one)."""

    name = "MIN"
    inline = Inline(("None",), "{t}v = {x0}\nif {t}v is not None and ({a0} is None or {t}v < {a0}):"
                    "\n    {a0} = {t}v", _NO_RETRACT, "{a0}")

    def create_accumulator(self) -> list[Any]:
        return [None]

    def accumulate(self, acc: list[Any], value: Any) -> None:
        if value is not None and (acc[0] is None or value < acc[0]):
            acc[0] = value

    def _merge_one(self, acc: list[Any], other: list[Any]) -> None:
        self.accumulate(acc, other[0])

    def get_value(self, acc: list[Any]) -> Any:
        return acc[0]

    def no_retraction(self) -> RetractionNotSupportedError:
        return RetractionNotSupportedError(self.name)


class Max(Min):
    """MAX(x) over an insert-only input (``MaxWithRetract`` for an updating one)."""

    name = "MAX"
    inline = Inline(("None",), "{t}v = {x0}\nif {t}v is not None and ({a0} is None or {t}v > {a0}):"
                    "\n    {a0} = {t}v", _NO_RETRACT, "{a0}")

    def accumulate(self, acc: list[Any], value: Any) -> None:
        if value is not None and (acc[0] is None or value > acc[0]):
            acc[0] = value


class FirstValue(Min):
    """FIRST_VALUE(x) over an insert-only input: the first non-null value."""

    name = "FIRST_VALUE"
    inline = Inline(("None",),
                    "{t}v = {x0}\nif {t}v is not None and {a0} is None:\n    {a0} = {t}v",
                    _NO_RETRACT, "{a0}")

    def accumulate(self, acc: list[Any], value: Any) -> None:
        if value is not None and acc[0] is None:
            acc[0] = value


class LastValue(Min):
    """LAST_VALUE(x) over an insert-only input: the last non-null value."""

    name = "LAST_VALUE"
    inline = Inline(("None",), "{t}v = {x0}\nif {t}v is not None:\n    {a0} = {t}v",
                    _NO_RETRACT, "{a0}")

    def accumulate(self, acc: list[Any], value: Any) -> None:
        if value is not None:
            acc[0] = value

    def _merge_one(self, acc: list[Any], other: list[Any]) -> None:
        self.accumulate(acc, other[0])
