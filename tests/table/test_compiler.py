"""The expression compiler: resolved expressions become Python functions with SQL semantics
(three-valued logic, NULL propagation, Java integer division, lazy CASE, casts)."""

import decimal

import pytest

from flintlock.common.types import RowKind, row_of
from flintlock.table import types as t
from flintlock.table.codegen.compiler import (
    CompiledFunction,
    compile_calc,
    compile_predicate,
    compile_projection,
)
from flintlock.table.codegen.sql_functions import SqlRuntimeError
from flintlock.table.plan.resolver import ExpressionResolver, Scope
from flintlock.table.sql.parser import parse_expression

SCOPE = Scope.of(["a", "b", "s", "n"], [t.IntType(), t.IntType(False), t.VarCharType(100),
                                        t.IntType()])


def rex(text):
    return ExpressionResolver(SCOPE).resolve(parse_expression(text))


def evaluate(text, values):
    function = compile_projection([rex(text)])
    return function(row_of(list(values)))._values[0]


@pytest.mark.parametrize("text, values, expected", [
    ("a + b", (1, 2, "x", None), 3),
    ("a + b", (None, 2, "x", None), None),
    ("7 / 2", (0, 0, "", None), 3),
    ("-7 / 2", (0, 0, "", None), -3),
    ("MOD(-7, 2)", (0, 0, "", None), -1),
    ("7.0 / 2", (0, 0, "", None), decimal.Decimal("3.500000")),
    ("a > 1 AND n IS NULL", (2, 0, "", None), True),
    ("n > 1 OR a > 1", (2, 0, "", None), True),
    ("n > 1 AND a > 1", (2, 0, "", None), None),
    ("n > 1 AND a > 5", (2, 0, "", None), False),
    ("CASE WHEN a = 1 THEN 'one' WHEN a = 2 THEN 'two' ELSE 'many' END", (2, 0, "", 0), "two"),
    ("CASE WHEN a = 1 THEN 'one' ELSE 'two' END", (2, 0, "", 0), "two"),
    ("CASE WHEN a = 1 THEN 'one' END", (2, 0, "", 0), None),
    ("UPPER(s) || '!'", (0, 0, "ab", 0), "AB!"),
    ("CHAR_LENGTH(s)", (0, 0, "héllo", 0), 5),
    ("SUBSTRING(s, 2, 3)", (0, 0, "abcdef", 0), "bcd"),
    ("s LIKE 'a%c'", (0, 0, "abbc", 0), True),
    ("s LIKE 'a_c'", (0, 0, "abbc", 0), False),
    ("CAST(a AS STRING)", (12, 0, "", 0), "12"),
    ("CAST(s AS INT) + 1", (0, 0, "41", 0), 42),
    ("TRY_CAST(s AS INT)", (0, 0, "x", 0), None),
    ("COALESCE(n, a, 0)", (5, 0, "", None), 5),
    ("a IN (1, 2, 3)", (2, 0, "", 0), True),
    ("a BETWEEN 1 AND 2", (3, 0, "", 0), False),
    ("JSON_VALUE(s, '$.x.y')", (0, 0, '{"x": {"y": 7}}', 0), "7"),
    ("JSON_VALUE(s, '$.missing')", (0, 0, '{"x": 1}', 0), None),
    ("IF(a > 1, 'big', 'small')", (2, 0, "", 0), "big"),
])
def test_expressions_follow_sql_semantics(text, values, expected):
    assert evaluate(text, values) == expected


def test_integer_division_by_zero_is_an_error_as_in_java():
    with pytest.raises(SqlRuntimeError):
        evaluate("a / b", (1, 0, "", 0))


def test_case_evaluates_only_the_branch_taken():
    # the ELSE branch would divide by zero; it must not run when the first branch is taken
    assert evaluate("CASE WHEN b = 0 THEN -1 ELSE a / b END", (1, 0, "", 0)) == -1


def test_a_filter_keeps_only_true_rows():
    predicate = compile_predicate(rex("n > 1"))
    assert predicate(row_of([0, 0, "", 2]))
    assert not predicate(row_of([0, 0, "", 1]))
    assert not predicate(row_of([0, 0, "", None]))  # NULL is not TRUE


def test_calc_projects_kept_rows_and_keeps_the_row_kind():
    calc = compile_calc([rex("a * 10")], rex("a > 1"))
    assert calc(row_of([1, 0, "", 0])) == ()
    (out,) = calc(row_of([3, 0, "", 0], RowKind.UPDATE_BEFORE))
    assert out._values == [30] and out.get_row_kind() is RowKind.UPDATE_BEFORE


def test_equal_sub_expressions_are_computed_once():
    calc = compile_projection([rex("UPPER(s) || 'a'"), rex("UPPER(s) || 'b'")])
    assert calc.source.count(".upper()") == 1


def test_non_null_operands_skip_null_checks():
    calc = compile_projection([rex("b + 1")])
    assert "is None" not in calc.source


def test_compiled_functions_pickle_as_source():
    import pickle

    calc = compile_projection([rex("a + b")])
    copy = pickle.loads(pickle.dumps(calc))
    assert isinstance(copy, CompiledFunction)
    assert copy(row_of([1, 2, "", 0]))._values == [3]
