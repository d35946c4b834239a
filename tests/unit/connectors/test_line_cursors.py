"""Line cursors: lines and positions at any block boundary, any terminator, any restart."""

import io
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from flintlock.datastream.connectors import _line_cursors
from flintlock.datastream.connectors._line_cursors import (
    ByteLineCursor,
    TextLineCursor,
    is_byte_oriented,
    open_cursor,
)


def _expected(text):
    lines = re.split(r"\r\n|\r|\n", text)
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def _read_all(data, charset, budgets, restarts):
    """Reads ``data`` with a fresh cursor after every read whose index is in ``restarts``."""
    out, position, step = [], 0, 0
    cursor = open_cursor(io.BytesIO(data), position, charset)
    while True:
        budget = budgets[step % len(budgets)]
        if cursor.read(budget, out):
            return out
        if step in restarts:
            cursor = open_cursor(io.BytesIO(data), cursor.position, charset)
        step += 1
        assert step < 100_000


def test_charsets_are_classified():
    assert is_byte_oriented("UTF-8") and is_byte_oriented("latin-1") and is_byte_oriented("gbk")
    assert not is_byte_oriented("UTF-16") and not is_byte_oriented("utf-32-le")
    assert isinstance(open_cursor(io.BytesIO(b""), 0, "utf-8"), ByteLineCursor)
    assert isinstance(open_cursor(io.BytesIO(b""), 0, "utf-16"), TextLineCursor)


def test_crlf_split_over_two_blocks_is_one_terminator(monkeypatch):
    monkeypatch.setattr(_line_cursors, "BLOCK_SIZE", 4)
    out = []
    assert ByteLineCursor(io.BytesIO(b"abc\r\ndef\r"), 0, "utf-8").read(10, out)
    assert out == ["abc", "def"]


def test_position_is_the_byte_offset_of_the_next_line(monkeypatch):
    monkeypatch.setattr(_line_cursors, "BLOCK_SIZE", 3)
    cursor = ByteLineCursor(io.BytesIO("é\n\nlast".encode()), 0, "utf-8")
    out = []
    assert not cursor.read(2, out)
    assert (out, cursor.position) == (["é", ""], 4)
    assert cursor.read(5, out)
    assert out == ["é", "", "last"]


def test_a_line_longer_than_a_block(monkeypatch):
    monkeypatch.setattr(_line_cursors, "BLOCK_SIZE", 2)
    out = []
    assert ByteLineCursor(io.BytesIO(b"x" * 9 + b"\ny"), 0, "ascii").read(5, out)
    assert out == ["x" * 9, "y"]


def test_empty_file_has_no_lines():
    out = []
    assert ByteLineCursor(io.BytesIO(b""), 0, "utf-8").read(3, out)
    assert out == []


@pytest.mark.parametrize("charset", ["UTF-8", "UTF-16"])
def test_restart_at_a_position_continues(charset):
    data = "one\r\ntwo\rthree\n".encode(charset)
    assert _read_all(data, charset, [1], {0, 1}) == ["one", "two", "three"]


text_strategy = st.lists(st.sampled_from(["a", "é", "z9", " ", "\n", "\r", "\r\n", "中"]),
                         max_size=60).map("".join)


@settings(max_examples=150, deadline=None)
@given(text=text_strategy, block=st.integers(1, 8),
       budgets=st.lists(st.integers(1, 5), min_size=1, max_size=4),
       restarts=st.sets(st.integers(0, 40)), charset=st.sampled_from(["utf-8", "utf-16"]))
def test_lines_equal_a_reference_split_under_any_blocks_and_restarts(text, block, budgets,
                                                                     restarts, charset):
    original = _line_cursors.BLOCK_SIZE
    _line_cursors.BLOCK_SIZE = block
    try:
        lines = _read_all(text.encode(charset), charset, budgets, restarts)
    finally:
        _line_cursors.BLOCK_SIZE = original
    assert lines == _expected(text)
