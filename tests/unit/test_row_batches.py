"""common.row_batches: the C routines (where built) and their Python twins behave the same."""

from __future__ import annotations

import gc
import os
import pickle
from typing import Any

import pytest

from flintlock.common import row_batches as rb
from flintlock.common.speedups import PURE_PYTHON_ENV
from flintlock.common.types import Row, RowKind, row_of
from flintlock.datastream.changelog.rows import key_selector

KINDS = tuple(RowKind)
TWINS: dict[str, dict[str, Any]] = {
    "python": {"new_row": rb._new_row, "rows_of": rb._rows_of,
               "rows_with_kinds": rb._rows_with_kinds, "rows_from_codes": rb._rows_from_codes,
               "split_rows": rb._split_rows, "field_reader": rb._py_field_reader,
               "split_columns": rb._split_columns, "rows_from_columns": rb._rows_from_columns},
}
if rb.accelerator is not None:
    TWINS["c"] = {"new_row": rb.accelerator.new_row, "rows_of": rb.accelerator.rows_of,
                  "rows_with_kinds": rb.accelerator.rows_with_kinds,
                  "rows_from_codes": rb.accelerator.rows_from_codes,
                  "split_rows": rb.accelerator.split_rows,
                  "field_reader": rb.accelerator.FieldKey,
                  "split_columns": rb.accelerator.split_columns,
                  "rows_from_columns": rb.accelerator.rows_from_columns}


def same(a: Row, b: Row) -> bool:
    return (type(a) is Row and a._values == b._values and a._fields == b._fields
            and a._row_kind is b._row_kind)


@pytest.fixture(params=sorted(TWINS))
def f(request: pytest.FixtureRequest) -> dict[str, Any]:
    return TWINS[request.param]


def test_the_accelerator_is_built_here() -> None:
    pure = os.environ.get(PURE_PYTHON_ENV, "").strip().lower() in ("1", "true", "yes")
    assert (rb.accelerator is None) == pure  # the checkout builds it (setup.py)


def test_new_row_is_row_of(f: dict[str, Any]) -> None:
    values = [1, "a", None]
    row = f["new_row"](values, RowKind.UPDATE_AFTER)
    assert same(row, row_of([1, "a", None], RowKind.UPDATE_AFTER))
    assert row._values is values  # taken, not copied
    assert row == Row.of_kind(RowKind.UPDATE_AFTER, 1, "a", None)


def test_batches(f: dict[str, Any]) -> None:
    lists = [[i, str(i)] for i in range(5)]
    assert all(same(r, row_of(v, RowKind.DELETE)) for r, v in zip(
        f["rows_of"](lists, RowKind.DELETE), lists, strict=True))
    kinds = [KINDS[i % 4] for i in range(5)]
    assert all(same(r, row_of(v, k)) for r, v, k in zip(
        f["rows_with_kinds"](kinds, lists), lists, kinds, strict=True))
    codes = bytes(i % 4 for i in range(5))
    assert all(same(r, row_of(v, KINDS[c])) for r, v, c in zip(
        f["rows_from_codes"](codes, KINDS, lists), lists, codes, strict=True))
    assert f["rows_of"]([], RowKind.INSERT) == []


def test_bad_batches(f: dict[str, Any]) -> None:
    with pytest.raises(ValueError):
        f["rows_with_kinds"]([RowKind.INSERT], [[1], [2]])
    with pytest.raises(ValueError):
        f["rows_from_codes"](bytes([0, 1]), KINDS, [[1]])
    with pytest.raises(ValueError):
        f["rows_from_codes"](bytes([7]), KINDS, [[1]])


def test_split_rows_is_the_inverse(f: dict[str, Any]) -> None:
    rows = [row_of([i], KINDS[i % 4]) for i in range(6)]
    codes, lists = f["split_rows"](rows, KINDS)
    assert codes == bytes(i % 4 for i in range(6)) and lists == [[i] for i in range(6)]
    assert all(same(a, b) for a, b in zip(f["rows_from_codes"](codes, KINDS, lists), rows,
                                          strict=True))
    assert f["split_rows"]([], KINDS) == (b"", [])
    assert f["split_rows"]([rows[0], Row(a=1)], KINDS) is None  # field names
    assert f["split_rows"]([rows[0], (1,)], KINDS) is None  # not a row
    assert f["split_rows"](rows, KINDS[:1]) is None  # a kind not given


def test_split_columns_is_the_inverse_of_rows_from_columns(f: dict[str, Any]) -> None:
    rows = [row_of([i, str(i), None], KINDS[i % 4]) for i in range(6)]
    codes, columns = f["split_columns"](rows, KINDS)
    assert codes == bytes(i % 4 for i in range(6))
    assert columns == [list(range(6)), [str(i) for i in range(6)], [None] * 6]
    back = f["rows_from_columns"](codes, KINDS, columns)
    assert all(same(a, b) for a, b in zip(back, rows, strict=True))
    assert back[0]._values is not rows[0]._values  # fresh lists
    empty = [row_of([], RowKind.DELETE)] * 2
    codes, columns = f["split_columns"](empty, KINDS)
    assert columns == [] and all(
        same(r, empty[0]) for r in f["rows_from_columns"](codes, KINDS, columns))
    assert f["split_columns"]([], KINDS) is None  # nothing to size the columns by
    assert f["split_columns"]([rows[0], row_of([1])], KINDS) is None  # widths differ
    assert f["split_columns"]([rows[0], Row(a=1)], KINDS) is None  # field names
    with pytest.raises(ValueError):
        f["rows_from_columns"](bytes([0, 0]), KINDS, [[1]])
    with pytest.raises(ValueError):
        f["rows_from_columns"](bytes([9]), KINDS, [[1]])


def test_field_reader(f: dict[str, Any]) -> None:
    row = row_of([10, 20, 30])
    one, two = f["field_reader"]((1,)), f["field_reader"]((2, 0))
    assert one(row) == 20 and two(row) == (30, 10)
    assert one((5, 6)) == 6 and two([1, 2, 3]) == (3, 1)  # any indexable record
    assert one(Row(a=1, b=2)) == 2
    with pytest.raises(IndexError):
        f["field_reader"]((5,))(row)


def test_key_selector_pickles_and_reads_fields() -> None:
    selector = key_selector([1, 0])
    copy = pickle.loads(pickle.dumps(selector))
    row = row_of(["x", 7])
    assert selector.get_key(row) == copy.get_key(row) == (7, "x")  # type: ignore[attr-defined]
    assert key_selector([0])(row) == "x" and key_selector([])(row) == ()


def _live_rows() -> int:
    return sum(1 for o in gc.get_objects() if type(o) is Row)


def test_rows_are_collected_in_cycles(f: dict[str, Any]) -> None:
    gc.collect()
    before = _live_rows()
    rows = f["rows_of"]([[i, None] for i in range(100)], RowKind.INSERT)
    for row in rows:
        row[1] = [row]  # a cycle through the row's value list, made through the public API
    assert _live_rows() == before + 100  # tracked by the collector
    del rows, row
    gc.collect()
    assert _live_rows() == before


@pytest.mark.skipif(rb.accelerator is None, reason="the C accelerator is not built")
def test_c_rows_over_atoms_are_untracked_until_they_hold_a_container() -> None:
    c = TWINS["c"]
    atoms = [1, 2**70, 1.5, "s", b"b", None, True, (1, "x")]
    built = [c["new_row"](list(atoms), RowKind.INSERT),
             *c["rows_of"]([list(atoms)], RowKind.DELETE),
             *c["rows_from_codes"](b"\x01", KINDS, [list(atoms)]),
             *c["rows_from_columns"](b"\x02", KINDS, [[a] for a in atoms])]
    for row in built:
        assert not gc.is_tracked(row) and not gc.is_tracked(row._values)
        assert same(row, rb._new_row(list(atoms), row._row_kind))  # the twin's row
        row[0] = 7  # an atom keeps it untracked
        assert not gc.is_tracked(row)
        row[1] = {"a": [1]}
        assert gc.is_tracked(row) and gc.is_tracked(row._values)
    holding = c["new_row"]([1, [2]], RowKind.INSERT)  # a container from the start
    assert gc.is_tracked(holding) and gc.is_tracked(holding._values)
