"""Built-ins added for PyFlink's ``pyflink.table.expressions`` surface (issue 27): each one
through the resolver and the compiler, as ``test_compiler`` does, and through its Table API
expression function."""

import random

import pytest

from flintlock.common.types import row_of
from flintlock.table import types as t
from flintlock.table.codegen.compiler import compile_projection
from flintlock.table.codegen.sql_functions import SqlRuntimeError
from flintlock.table.errors import UnsupportedFeatureError, ValidationError
from flintlock.table.expression import to_node
from flintlock.table.expressions import col, lit, rand_integer
from flintlock.table.plan.resolver import ExpressionResolver, Scope
from flintlock.table.sql.parser import parse_expression

SCOPE = Scope.of(["a", "b", "s"], [t.IntType(), t.IntType(False), t.VarCharType(100)])


def resolve(node):
    return ExpressionResolver(SCOPE).resolve(node)


def evaluate(node, values):
    return compile_projection([resolve(node)])(row_of(list(values)))._values[0]


def test_rand_integer_draws_in_zero_to_bound():
    random.seed(7)
    drawn = {evaluate(parse_expression("RAND_INTEGER(b)"), (None, 3, "")) for _ in range(200)}
    assert drawn == {0, 1, 2}


def test_rand_integer_is_an_int_null_for_a_null_bound():
    assert resolve(parse_expression("RAND_INTEGER(b)")).type == t.IntType(False)
    assert resolve(parse_expression("RAND_INTEGER(a)")).type == t.IntType(True)
    assert evaluate(parse_expression("RAND_INTEGER(a)"), (None, 3, "")) is None


def test_rand_integer_from_the_table_api():
    assert evaluate(to_node(rand_integer(col("b"))), (None, 1, "")) == 0
    assert evaluate(to_node(rand_integer(lit(1))), (None, 1, "")) == 0


def test_rand_integer_needs_a_positive_bound():
    with pytest.raises(SqlRuntimeError, match="bound must be positive"):
        evaluate(parse_expression("RAND_INTEGER(b)"), (None, 0, ""))


def test_rand_integer_needs_an_integer_bound():
    with pytest.raises(ValidationError, match="RAND_INTEGER"):
        resolve(parse_expression("RAND_INTEGER(s)"))


def test_a_seeded_rand_integer_is_unsupported_by_name():
    with pytest.raises(UnsupportedFeatureError, match="RAND_INTEGER with a seed"):
        resolve(to_node(rand_integer(col("b"), 42)))


def test_over_window_offsets_are_expressions_naming_their_bound():
    from flintlock.table.expression import Expression
    from flintlock.table.expressions import (
        CURRENT_RANGE,
        CURRENT_ROW,
        UNBOUNDED_RANGE,
        UNBOUNDED_ROW,
        OverOffset,
        row_interval,
    )
    from flintlock.table.window import Over

    offsets = {"UNBOUNDED_ROW": UNBOUNDED_ROW, "UNBOUNDED_RANGE": UNBOUNDED_RANGE,
               "CURRENT_ROW": CURRENT_ROW, "CURRENT_RANGE": CURRENT_RANGE}
    for name, offset in offsets.items():
        assert isinstance(offset, Expression)
        assert isinstance(to_node(offset), OverOffset) and to_node(offset).this == name
    four = to_node(row_interval(4))
    assert (four.this, four.expression.this) == ("ROWS", 4)
    window = Over.partition_by(col("a")).order_by(col("b")).preceding(row_interval(4))
    assert window.following(CURRENT_ROW).following_ is CURRENT_ROW
    with pytest.raises(ValidationError, match="row_interval"):
        row_interval(-1)
