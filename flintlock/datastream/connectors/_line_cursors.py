"""Line cursors: read text lines from an open binary file and know where the next line starts.

A cursor is created at a ``position`` (0, or a value its ``position`` returned before) and
hands out lines, without their terminator (``\\n``, ``\\r\\n`` or ``\\r``), in file order.
``position`` is always the start of the first line not handed out yet, so a new cursor
created there continues without repeating or skipping a line.

* ``ByteLineCursor`` — for charsets in which ``\\n`` and ``\\r`` are the single bytes 0x0A and
  0x0D and never part of another character (UTF-8, ASCII, the ISO-8859 and Windows code pages,
  GBK, Shift-JIS, ...): reads 1 MiB blocks, splits them into lines as bytes, decodes line by
  line; ``position`` is a byte offset. This is the fast path (about 3x the text one).
* ``TextLineCursor`` — any other charset (UTF-16, UTF-32): Python's text layer, one
  ``readline`` per line; ``position`` is its ``tell()`` value.

A cursor belongs to the reader that created it (its source task's thread).
"""

from __future__ import annotations

import io
from typing import BinaryIO

BLOCK_SIZE = 1 << 20


def is_byte_oriented(charset: str) -> bool:
    """Whether ``\\n`` and ``\\r`` are single bytes in ``charset`` (see the module docstring)."""
    try:
        return "\n\r".encode(charset) == b"\n\r" and "\n".encode(charset) == b"\n"
    except (LookupError, UnicodeError):
        return False


class ByteLineCursor:
    def __init__(self, file: BinaryIO, position: int, charset: str) -> None:
        self._file = file
        self._charset = charset
        if position:
            file.seek(position)
        self._position = position
        self._lines: list[bytes] = []  # whole lines with terminators, not handed out yet
        self._next = 0  # index of the next line in _lines
        self._tail = b""  # the start of a line whose end is in the next block
        self._eof = False

    @property
    def position(self) -> int:
        return self._position

    def read(self, budget: int, out: list[str]) -> bool:
        """Appends up to ``budget`` lines to ``out``; True once the file is exhausted."""
        while budget > 0:
            if self._next >= len(self._lines) and not self._fill():
                return True
            taken = self._lines[self._next:self._next + budget]
            self._next += len(taken)
            budget -= len(taken)
            self._position += sum(map(len, taken))
            out.extend(self._decode(taken))
        return False

    def _decode(self, lines: list[bytes]) -> list[str]:
        """One decode per batch; each line has exactly one terminator, except a last line
        of the file without one."""
        text = b"".join(lines).decode(self._charset)
        if "\r" in text:
            text = text.replace("\r\n", "\n").replace("\r", "\n")
        decoded = text.split("\n")
        if lines[-1].endswith((b"\n", b"\r")):
            decoded.pop()
        return decoded

    def _fill(self) -> bool:
        """Reads blocks until there is a whole line; False at the end of the file."""
        while not self._eof:
            block = self._file.read(BLOCK_SIZE)
            data = self._tail + block
            if not block:
                self._eof = True
                self._lines, self._tail = ([data] if data else []), b""
            else:
                lines = data.splitlines(keepends=True)
                # The last piece may be incomplete, or a "\r" whose "\n" is in the next block.
                self._tail = lines.pop()
                self._lines = lines
            self._next = 0
            if self._lines:
                return True
        return False


class TextLineCursor:
    def __init__(self, file: BinaryIO, position: int, charset: str) -> None:
        self._text = io.TextIOWrapper(file, encoding=charset, newline=None)
        if position:
            self._text.seek(position)
        self._position = position

    @property
    def position(self) -> int:
        return self._position

    def read(self, budget: int, out: list[str]) -> bool:
        readline = self._text.readline
        for _ in range(budget):
            line = readline()
            if not line:
                return True
            out.append(line[:-1] if line.endswith("\n") else line)
        self._position = self._text.tell()
        return False


def open_cursor(file: BinaryIO, position: int, charset: str) -> ByteLineCursor | TextLineCursor:
    if is_byte_oriented(charset):
        return ByteLineCursor(file, position, charset)
    return TextLineCursor(file, position, charset)
