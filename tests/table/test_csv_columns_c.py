"""The csv batch split in C (``common/_cformats.c``, issue 33) against its Python twin
(``formats.csv._python_split``): on any batch of lines the C-backed reader gives the same
columns, values, types and errors as the twin-only one, plain batches (where C decides) and
irregular ones (where it hands the batch to the twin) alike."""

from __future__ import annotations

import datetime
import os
import random
from typing import Any

import pytest

from flintlock.common.speedups import PURE_PYTHON_ENV
from flintlock.table import types as t
from flintlock.table.connectors._options import Options
from flintlock.table.formats import csv as csv_format
from flintlock.table.formats._base import FormatParseError
from flintlock.table.plan.nodes import Field

built = pytest.mark.skipif(csv_format._cformats is None,
                           reason="the C extension is not built (pure Python install)")


def test_the_c_split_is_built_here() -> None:
    pure = os.environ.get(PURE_PYTHON_ENV, "").strip().lower() in ("1", "true", "yes")
    assert (csv_format._cformats is None) == pure  # the checkout builds it (setup.py)

FIELDS = [Field("a", t.BigIntType()), Field("s", t.VarCharType(2147483647)),
          Field("ts", t.TimestampType(3)), Field("i", t.IntType()),
          Field("d", t.DecimalType(10, 2))]

ODD_INTS = ["", "+5", " 7", "1_0", "007", "-0", "12345678901234567890", "x", "\u0663", "-"]
ODD_STAMPS = ["2015-02-30 00:00:00", "2015-13-01 00:00:00", "2015-07-15 24:00:00",
              "0000-01-01 00:00:00", "2015-07-15", "", "2015-07-15 00:00:00.",
              "2015-07-15x00:00:00", "2015-07-15 00:00:00.1234567", "2015-7-15 00:00:00"]
ODD_DECIMALS = ["abc", ""]
TEXT_CHARS = "abc xyz;:|/\t\u00e9\u20ac\U0001f600-+.0123456789"


def an_int(rng: random.Random, plain: bool) -> str:
    if not plain and rng.random() < 0.2:
        return rng.choice(ODD_INTS)
    return str(rng.randint(-10**18 + 1, 10**18 - 1) if rng.random() < 0.3
               else rng.randint(-999, 99999))


def a_stamp(rng: random.Random, plain: bool) -> str:
    if not plain and rng.random() < 0.2:
        return rng.choice(ODD_STAMPS)
    moment = datetime.datetime(1, 1, 1) + datetime.timedelta(
        seconds=rng.randint(0, 315_000_000_000), microseconds=rng.randint(0, 999_999))
    text = moment.isoformat(sep=rng.choice(" T"))[:19]
    digits = rng.randint(0, 6)
    return text + ("." + f"{moment.microsecond:06d}"[:digits] if digits else "")


def a_line(rng: random.Random, plain: bool) -> str:
    text = "".join(rng.choice(TEXT_CHARS) for _ in range(rng.randint(0, 6)))
    if not plain and rng.random() < 0.1:
        return ",".join([an_int(rng, plain), text])  # another number of columns
    decimal_text = (rng.choice(ODD_DECIMALS) if not plain and rng.random() < 0.1
                    else f"{rng.randint(-9999, 9999) / 100:.2f}")
    stamp = a_stamp(rng, plain)
    if rng.random() < 0.5:  # event times repeat: the C split reuses an equal timestamp
        stamp = "2015-07-15 00:00:00.001"
    return ",".join([an_int(rng, plain), text, stamp, an_int(rng, plain), decimal_text])


def outcome(read: Any, lines: list[str]) -> Any:
    try:
        columns, count = read(lines)
    except FormatParseError as error:
        return ("error", str(error))
    return count, [None if c is None else [(type(v), v) for v in c] for c in columns]


_READERS: dict[tuple[Any, bool], tuple[Any, Any]] = {}


def readers(wanted: Any, ignore: bool) -> tuple[Any, Any]:
    """The batch reader with the C split and the twin-only one (built once per case)."""
    key = (None if wanted is None else tuple(sorted(wanted)), ignore)
    if key not in _READERS:
        options = Options({"csv.ignore-parse-errors": "true"} if ignore else {})
        settings_ = csv_format.CsvSettings(options, "csv")
        with_c = csv_format.batch_reader(FIELDS, settings_, wanted)
        built, csv_format._cformats = csv_format._cformats, None
        try:
            twin = csv_format.batch_reader(FIELDS, settings_, wanted)
        finally:
            csv_format._cformats = built
        _READERS[key] = with_c, twin
    return _READERS[key]


@built
@pytest.mark.parametrize("seed", range(4))
def test_the_c_split_reads_what_the_python_twin_reads(seed):
    rng = random.Random(seed)
    for _ in range(150):
        plain = rng.random() < 0.5
        lines = [a_line(rng, plain) for _ in range(rng.randint(1, 12))]
        if not plain and rng.random() < 0.15:  # an empty line: skipped by the per-line reader
            lines.insert(rng.randrange(len(lines) + 1), "")
        wanted = rng.choice([None, {0, 2}, {1, 3, 4}, {2}])
        with_c, twin = readers(wanted, rng.random() < 0.5)
        assert outcome(with_c, lines) == outcome(twin, lines), lines


@built
def test_plain_batches_are_split_in_c():
    """The C split decides plain batches itself (the twin is not called) and reuses equal
    timestamps; a batch it cannot read goes to the twin."""
    settings_ = csv_format.CsvSettings(Options({}), "csv")
    lines = ["1,a,2015-07-15 00:00:00.001,7,1.25", "-2,b,2015-07-15 00:00:00.001,8,2.50"]
    called = []
    twin = csv_format._python_split(FIELDS, settings_, None)
    split = csv_format._c_split(FIELDS, settings_, None,
                                lambda text, ls: called.append(ls) or twin(text, ls))
    assert split is not None
    columns = split("\n".join(lines), lines)
    assert called == []
    assert columns[0] == [1, -2] and columns[1] == ["a", "b"] and columns[3] == [7, 8]
    assert columns[2][0] == datetime.datetime(2015, 7, 15, 0, 0, 0, 1000)
    assert columns[2][0] is columns[2][1]
    assert [str(d) for d in columns[4]] == ["1.25", "2.50"]
    odd = ["1,a,2015-07-15 00:00:00.001,+7,1.25"]
    assert split(odd[0], odd)[3] == [7]
    assert called == [odd]


@built
def test_a_null_literal_leaves_the_batch_to_the_twin():
    settings_ = csv_format.CsvSettings(Options({"csv.null-literal": "7"}), "csv")
    assert csv_format._c_split(FIELDS, settings_, None, lambda text, ls: []) is None
