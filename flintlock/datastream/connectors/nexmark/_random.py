"""Deterministic randomness for the Nexmark generator: the random bits of one event, and the
fixed text pools strings are cut from.

**Per-event bits.** Every draw an event makes comes from one 256-bit number derived from the
event id alone (BLAKE2b of the id, ``bits_of``); a draw in ``[0, n)`` is the remainder of a
division of what is left (``Bits.below``), so an event never depends on the events before it,
on its split, or on the Python version. 256 bits cover the most draws any event makes (an
auction: about 200 bits); were they used up, further draws would be 0, never an error.

**Pools.** Random strings are slices of two fixed pools built from BLAKE2b of a counter, as
Flink's generator cuts its ``extra`` payload from one pre-generated string: ``WORDS`` holds
lowercase letters with a space about every 13th character (``nextString``'s shape: words of
letters; the slice is trimmed), ``LETTERS`` lowercase letters only (``nextExactString``).

Pure functions and module constants built at import; any thread.
"""

from __future__ import annotations

from hashlib import blake2b

POOL_SIZE = 1 << 16
_ALPHABET = "abcdefghijklmnopqrstuvwxyz"


def bits_of(event_id: int) -> int:
    """The random bits of event ``event_id`` (a non-negative integer below 2**64)."""
    digest = blake2b(event_id.to_bytes(8, "little"), digest_size=32,
                     person=b"nexmark-event").digest()
    return int.from_bytes(digest, "little")


class Bits:
    """Draws from a fixed supply of random bits, one after the other."""

    __slots__ = ("_left",)

    def __init__(self, bits: int) -> None:
        self._left = bits

    def below(self, bound: int) -> int:
        """A draw in ``[0, bound)``; ``bound`` >= 1."""
        self._left, value = divmod(self._left, bound)
        return value

    def unit(self) -> float:
        """A draw in ``[0.0, 1.0)`` with 32 bits of resolution."""
        return self.below(1 << 32) / 4294967296.0


def _pool(label: bytes, table: str) -> str:
    chunks = []
    for counter in range(POOL_SIZE // 64):
        digest = blake2b(counter.to_bytes(8, "little"), digest_size=64, person=label).digest()
        chunks.append("".join(table[byte] for byte in digest))
    return "".join(chunks)


# 256 entries each: 20 spaces among 236 letters (a space about every 13th character).
_WORD_TABLE = (_ALPHABET * 10)[:236] + " " * 20
_LETTER_TABLE = (_ALPHABET * 10)[:256]
WORDS = _pool(b"nexmark-words", _WORD_TABLE)
LETTERS = _pool(b"nexmark-letters", _LETTER_TABLE)


def next_string(bits: Bits, max_length: int, special: str = " ") -> str:
    """A string of 3 to ``max_length - 1`` characters of letters and ``special``, trimmed of
    spaces (Nexmark's ``nextString``); never empty (a slice of spaces only becomes letters,
    so that no CSV reader has to tell an empty string from NULL)."""
    length = 3 + bits.below(max_length - 3)
    offset = bits.below(POOL_SIZE - length)
    text = WORDS[offset:offset + length]
    if special != " ":
        return text.replace(" ", special)
    return text.strip() or LETTERS[offset:offset + length]


def exact_string(bits: Bits, length: int) -> str:
    """``length`` lowercase letters (Nexmark's ``nextExactString``)."""
    if length < POOL_SIZE // 2:
        offset = bits.below(POOL_SIZE - length)
        return LETTERS[offset:offset + length]
    repeats = length // POOL_SIZE + 2
    offset = bits.below(POOL_SIZE)
    return (LETTERS * repeats)[offset:offset + length]


def next_extra(bits: Bits, current_size: int, average_size: int) -> str:
    """Padding so that ``current_size`` plus its length is ``average_size`` on average: a
    length uniform within 20 % of the gap (Nexmark's ``nextExtra``)."""
    if current_size > average_size:
        return ""
    gap = average_size - current_size
    delta = int(gap * 0.2 + 0.5)
    size = gap - delta + (bits.below(2 * delta) if delta else 0)
    return exact_string(bits, size)


__all__ = ["LETTERS", "POOL_SIZE", "WORDS", "Bits", "bits_of", "exact_string", "next_extra",
           "next_string"]
