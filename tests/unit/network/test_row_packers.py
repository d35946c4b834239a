"""The typed codec's tuple layouts in both builds: the C accelerator's ``pack_rows`` /
``unpack_rows`` (rows) and ``transpose`` (columns), and their Python twins (``struct``,
``typed_codec._struct_rows_plan``; a type scan and ``zip``).

What is shown: both accept and refuse the same batches (any refusal is one of the codec's
``ENCODE_ERRORS``, which the serializer turns into a ``RecordTypeMismatchError``), and what
both accept decodes to the same records; how each chooses the width of integer fields; and
that the accelerator is built wherever a C compiler and Python's headers are, since the
build is optional and would otherwise fail without a word.
"""

from __future__ import annotations

import gc
import os
import shutil
import struct
import sysconfig
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from flintlock.common.speedups import PURE_PYTHON_ENV
from flintlock.common.typeinfo import Types
from flintlock.runtime.network import typed_codec
from flintlock.runtime.network.typed_codec import (
    ENCODE_ERRORS,
    RETRY_NARROWER_EVERY,
    CodecPlan,
    compile_plan,
    decode_chunk,
    encode_chunk,
)

INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
FIELD_TYPES = {"q": Types.LONG(), "i": Types.INT(), "h": Types.SHORT(), "b": Types.BYTE(),
               "d": Types.DOUBLE(), "f": Types.FLOAT(), "s": Types.STRING(), "?": Types.BOOLEAN()}
compiled = pytest.mark.skipif(typed_codec.accelerator is None,
                              reason="the C accelerator is not built here")


def _plan(codes: str, packer: str, monkeypatch: pytest.MonkeyPatch) -> CodecPlan:
    with monkeypatch.context() as patch:
        if packer == "Python":
            patch.setattr(typed_codec, "accelerator", None)
        plan = compile_plan(Types.TUPLE([FIELD_TYPES[code] for code in codes]))
    assert plan is not None
    return plan


def _schema_of(plan: CodecPlan, records: list[Any]) -> str:
    chunk = encode_chunk(plan, records)
    assert decode_chunk(chunk)[0] == [tuple(record) for record in records]
    return chunk[3:3 + chunk[2]].decode("ascii")


def _outcome(codes: str, build: str, records: list[Any]) -> tuple[str, str]:
    """What one build makes of a batch, compiled, encoded and decoded in that build: the
    records a reader gets (as text, so NaN equals NaN and -0.0 differs from 0.0), or that it
    refused them."""
    with pytest.MonkeyPatch.context() as monkeypatch:
        plan = _plan(codes, build, monkeypatch)
        if build == "Python":
            monkeypatch.setattr(typed_codec, "accelerator", None)
        try:
            chunk = encode_chunk(plan, records)
        except ENCODE_ERRORS:
            return "refused", ""
        return "packed", repr(decode_chunk(chunk)[0])


def _fitting(code: str) -> st.SearchStrategy[Any]:
    """Values a field of ``code`` takes: integers in range (bools too), reals (ints too), text
    (NUL and lone surrogates included) or booleans."""
    if code == "s":
        return st.text(st.characters(exclude_categories=()), max_size=3)
    if code == "?":
        return st.booleans()
    if code in "df":
        return st.floats() | st.integers(-(2**53), 2**53) | st.floats(width=32)
    bits = {"b": 8, "h": 16, "i": 32, "q": 64}[code]
    return st.integers(-(1 << (bits - 1)), (1 << (bits - 1)) - 1) | st.booleans()


# What may spoil a batch: a field that fits no code or not its own, a record of another shape.
SPOILERS = (st.integers() | st.floats() | st.sampled_from([1e39, -1e39, 3.5e38, 2**63, 2**31])
            | st.text(max_size=2) | st.none())


FIELD_CODES = st.sampled_from(["qihbdf", "qihbdfs?"])  # rows only, or rows and columns


@st.composite
def _batches(draw: st.DrawFn) -> tuple[str, list[Any]]:
    """A batch of records fitting ``codes`` (tuples or lists), half the time with one record
    or one field spoiled."""
    codes = "".join(draw(st.lists(st.sampled_from(draw(FIELD_CODES)), min_size=1, max_size=4)))
    record = st.tuples(*(_fitting(code) for code in codes))
    records = draw(st.lists(record | record.map(list), min_size=1, max_size=8))
    if draw(st.booleans()):
        at = draw(st.integers(0, len(records) - 1))
        fields = list(records[at])
        spoiled = draw(st.sampled_from(["field", "shorter", "longer", "not a sequence"]))
        if spoiled == "field":
            fields[draw(st.integers(0, len(fields) - 1))] = draw(SPOILERS)
            records[at] = tuple(fields)
        elif spoiled == "shorter":
            records[at] = tuple(fields[:-1])
        elif spoiled == "longer":
            records[at] = (*fields, 0)
        else:
            records[at] = draw(st.text(max_size=len(codes)) | st.just(frozenset(fields)))
    return codes, records


@compiled
@settings(max_examples=400, deadline=None)
@given(batch=_batches())
def test_both_builds_refuse_the_same_batches_and_decode_the_same_records(batch):
    """Tuples of fixed-width fields (rows: ``pack_rows``) and with text or booleans too
    (columns: ``transpose``)."""
    codes, records = batch
    assert _outcome(codes, "C", records) == _outcome(codes, "Python", records)


def test_the_python_packer_narrows_every_integer_field_alike_and_widens_when_needed(
        monkeypatch):
    plan = _plan("qq", "Python", monkeypatch)
    small = [(key, 1) for key in range(100)]
    assert _schema_of(plan, small) == "Rbb"  # 2 bytes a record, not 16
    assert _schema_of(plan, [(1, 2**40), (INT64_MIN, INT64_MAX)]) == "Rqq"
    assert _schema_of(plan, small) == "Rqq"  # stays as wide as the last batch needed...
    for _ in range(RETRY_NARROWER_EVERY):
        _schema_of(plan, small)
    assert _schema_of(plan, small) == "Rii"  # ...then tries one step narrower at a time
    assert _schema_of(plan, [(300, 1)]) == "Rii"


@compiled
def test_the_c_packer_packs_each_integer_column_as_narrow_as_its_batch_allows(monkeypatch):
    plan = _plan("qidq", "C", monkeypatch)
    assert _schema_of(plan, [(1, 1, 0.5, 1)]) == "Rbbdb"
    assert _schema_of(plan, [(2**40, -129, 1.0, 127), (0, 32767, 2.0, -128)]) == "Rqhdb"
    assert _schema_of(plan, [(1, -(2**31), 3.0, 2**15)]) == "Rbidi"  # no width kept
    assert _schema_of(plan, [[5, 6, 7, 8]]) == "Rbbdb"  # a list arrives as a tuple
    assert _schema_of(plan, []) == "Rbbdb"


def _can_compile() -> bool:
    headers = Path(sysconfig.get_paths()["include"]) / "Python.h"
    return headers.exists() and any(shutil.which(cc) for cc in ("cc", "gcc", "clang"))


def test_the_accelerator_is_built_wherever_it_can_be():
    """``setup.py`` marks the extension optional, so a broken build installs without it; this
    is where such a build shows (``pip install -e .`` builds it in place)."""
    if os.environ.get(PURE_PYTHON_ENV):
        assert typed_codec.accelerator is None  # switched off on purpose
    elif _can_compile():
        assert typed_codec.accelerator is not None, (
            "no C accelerator although a C compiler and Python.h are here: "
            "run `.venv/bin/pip install -e .` and read the build's output")


@compiled
def test_the_c_reader_gives_records_the_cycle_collector_need_not_visit(monkeypatch):
    """Tuples of ints and floats cannot be part of a cycle; CPython untracks one only when a
    collection first visits it, the C reader at once."""
    plan = _plan("qd", "C", monkeypatch)
    records = [(key, key / 2) for key in range(-300, 300)]
    decoded, _ = decode_chunk(encode_chunk(plan, records))
    assert decoded == records
    assert not any(map(gc.is_tracked, decoded))
    monkeypatch.setattr(typed_codec, "accelerator", None)
    assert decode_chunk(encode_chunk(plan, records))[0] == records  # the same bytes in Python


@compiled
@given(values=st.lists(st.one_of(st.integers(-(2**63), 2**63 - 1),
                                 st.sampled_from([-(2**63), 2**63 - 1, 0, -1]))))
def test_pack_longs_writes_what_array_q_writes(values: list[int]) -> None:
    assert typed_codec.accelerator is not None
    expected = struct.pack(f"<{len(values)}q", *values)  # what array('q') gives, little-endian
    assert typed_codec.accelerator.pack_longs(values) == expected


@compiled
def test_pack_longs_declines_what_is_not_an_int_and_rejects_what_does_not_fit() -> None:
    accelerator = typed_codec.accelerator
    assert accelerator is not None
    assert accelerator.pack_longs([1, True]) is None  # the array path takes subclasses
    assert accelerator.pack_longs([1, 2.0]) is None
    with pytest.raises(OverflowError):
        accelerator.pack_longs([1, 2**63])
    assert typed_codec._encode_fixed("q", [5, True]) == ("q", struct.pack("<2q", 5, 1))
