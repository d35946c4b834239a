"""Cheap compiled forms (issue 28, speed): a widening integer CAST (INT -> BIGINT, as a
sink's wider column asks) is the value itself, a narrowing one still wraps as Java's does; MOD
by a positive constant is inline, with Java's sign of the dividend."""

from __future__ import annotations

from flintlock.common.types import row_of
from flintlock.table import types as t
from flintlock.table.codegen.compiler import compile_projection
from flintlock.table.plan.resolver import ExpressionResolver, Scope
from flintlock.table.sql.parser import parse_expression

SCOPE = Scope.of(["i", "b"], [t.IntType(), t.BigIntType()])


def _compiled(text: str):
    return compile_projection([ExpressionResolver(SCOPE).resolve(parse_expression(text))])


def test_widening_is_the_value_itself() -> None:
    function = _compiled("CAST(i AS BIGINT)")
    assert "cast_to_integer" not in function.source
    assert function(row_of([-7, 0]))._values == [-7]
    assert function(row_of([None, 0]))._values == [None]


def test_narrowing_still_wraps() -> None:
    function = _compiled("CAST(b AS INT)")
    assert "cast_to_integer" not in function.source  # integer to integer: inline
    assert function(row_of([0, 2**31]))._values == [-(2**31)]


def test_mod_by_a_positive_constant_is_inline_with_javas_sign() -> None:
    function = _compiled("MOD(b, 100)")
    assert "int_mod" not in function.source
    assert [function(row_of([0, v]))._values[0] for v in (-7, 7, -300, 0, None)] == [
        -7, 7, 0, 0, None]
    assert [function(row_of([0, v]))._values[0] for v in (-101, 101)] == [-1, 1]
    assert "int_mod" in _compiled("MOD(b, i)").source
