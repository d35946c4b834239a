"""Built-ins added for PyFlink's ``pyflink.table.expressions`` surface (issue 27): each one
through the resolver and the compiler, as ``test_compiler`` does, and through its Table API
expression function."""

import random

import pytest

from flintlock.common.types import row_of
from flintlock.table import types as t
from flintlock.table.codegen.compiler import compile_projection
from flintlock.table.codegen.sql_functions import JavaRandom, SqlRuntimeError
from flintlock.table.errors import ValidationError
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


def test_seeded_rand_and_rand_integer_repeat_javas_sequence():
    # java.util.Random(42): nextDouble() 0.7275636800328681, 0.6832234717598454; then
    # nextInt(10) 0, nextInt(7) 4 (printed by OpenJDK 17 on this machine)
    doubles = compile_projection([resolve(parse_expression("RAND(42)"))])
    assert [doubles(row_of([None, 1, ""]))._values[0] for _ in range(2)] == [
        0.7275636800328681, 0.6832234717598454]
    first = JavaRandom(42)
    expected = [first.next_int(10) for _ in range(20)]
    for node in (parse_expression("RAND_INTEGER(42, b)"), to_node(rand_integer(col("b"), 42))):
        ints = compile_projection([resolve(node)])
        assert [ints(row_of([None, 10, ""]))._values[0] for _ in range(20)] == expected


def test_java_random_is_javas():
    generator = JavaRandom(42)
    drawn = [generator.next_double(), generator.next_double(), generator.next_int(10),
             generator.next_int(7), generator.next_int(1000000007), generator.next_int(64)]
    assert drawn == [0.7275636800328681, 0.6832234717598454, 0, 4, 595021505, 45]


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


def test_timestamp_add_in_whole_seconds_units_is_calendar_free_arithmetic():
    import datetime

    from flintlock.table.codegen.sql_functions import timestamp_add

    start = datetime.datetime(2024, 2, 28, 23, 59, 59, 500000)
    seconds = {"WEEK": 604800, "DAY": 86400, "HOUR": 3600, "MINUTE": 60, "SECOND": 1}
    for unit, size in seconds.items():
        for amount in (-3, 0, 1, 100_000):
            assert timestamp_add(unit, amount, start) == start + datetime.timedelta(
                seconds=amount * size)
    assert timestamp_add("MONTH", 1, start) == datetime.datetime(2024, 3, 28, 23, 59, 59, 500000)
    assert timestamp_add("MILLISECOND", -500, start) == start.replace(microsecond=0)
    with pytest.raises(SqlRuntimeError):
        timestamp_add("FORTNIGHT", 1, start)


def test_a_narrowing_integer_cast_inline_wraps_as_cast_to_integer():
    from flintlock.table.codegen.compiler import compile_values
    from flintlock.table.codegen.sql_functions import cast_to_integer
    from flintlock.table.plan.rex import Call, InputRef

    for target, bits in ((t.IntType(True), 32), (t.SmallIntType(True), 16),
                         (t.TinyIntType(True), 8)):
        cast = compile_values([Call(target, "CAST", (InputRef(t.BigIntType(True), 0),))])
        assert "cast_to_integer" not in cast.source
        for value in (0, 5, -5, 2**31, -(2**31) - 1, 2**63 - 1, -(2**63), 300, -129):
            assert cast(row_of([value]))[0] == cast_to_integer(value, bits)
        assert cast(row_of([None]))[0] is None
