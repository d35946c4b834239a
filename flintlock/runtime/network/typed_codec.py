"""Typed codecs: how a batch of records of a declared type is encoded, checked and decoded.

Design note. In PyFlink ``output_type`` picks a serializer; here it picks a *codec* for an
edge, once, from the declared ``TypeInformation``. The codec does two jobs in one pass over a
batch, with no Python bytecode per record (every loop below runs in C: ``array``, ``struct``,
``str.join``, ``zip``):

* it **checks** the records: an integer column is built with ``array('q' | 'i' | 'h' | 'b')``,
  which rejects anything that is not an integer in range (a LONG column of plain ints, and
  a run's timestamps, by the accelerator's ``pack_longs`` where it was built: the same bytes
  and the same OverflowError, at a few ns a value where ``array`` takes about 100); a text
  column is joined with ``str.join``, which rejects anything that is not a ``str``; a tuple
  of fixed-width fields is packed by the C accelerator's ``pack_rows``
  (``common/_speedups.c``; 14 ns a ``(LONG, LONG)`` record against 30-42 for pickle) or,
  where it was not built, with ``struct``; both reject a wrong arity or a wrong field (a
  tuple with text or booleans is transposed into columns by the accelerator's
  ``transpose``, or a type scan and ``zip``, which check the same); a TUPLE's records must
  be tuples or lists, since ``struct`` and ``zip`` would take any other iterable apart into
  fields (a ``str``, a ``dict``'s keys, a ``Row``);
* it **encodes** them into a chunk that decodes faster than a pickle of the same list, and
  decoding **converts** as PyFlink does: an ``int`` in a FLOAT/DOUBLE field arrives as a
  ``float`` (FLOAT rounded to 32 bits), a ``list`` for a TUPLE as a ``tuple``, an integer
  subclass (``bool``, ``IntEnum``, NumPy integers) as an ``int``.

A type the codec cannot lay out (ROW, MAP, LIST, dates, decimals, PICKLED_BYTE_ARRAY, a tuple
with such a field) has no plan: the serializer that owns the codec pickles those batches and
checks them with the type's compiled predicate (``TypeInformation.predicate``).

Chunk layout (self-describing, so a reader needs no type: channel state restored after a
rescale, or by a later version, decodes without the job graph)::

    chunk  := MAGIC flags:u8 block [run]          flags bit 0: a run follows
    block  := schema_len:u8 schema count:u32 column*
    column := nbytes:u32 payload
    run    := block timestamps-column              (an ``event_time.StampedRun``)

A schema is ASCII: ``V<code>`` one scalar column, ``R<struct format>`` rows of fixed-width
fields packed with ``struct`` (one column; integer fields as narrow as the batch allows),
``C<code>...`` one column per tuple field. Column codes: ``q i h b d f`` fixed width
(little-endian), ``s`` text joined with NUL, ``S`` text containing NUL (pickled list), ``?``
booleans (one byte each), ``p`` values pickled as a list.
A pickle chunk starts with ``0x80`` (protocol 2+), so ``MAGIC`` (``0xF1``) never collides.

Pure functions; a plan belongs to the serializer that compiled it (one per edge) and is used
by the thread that owns that serializer.
"""

from __future__ import annotations

import pickle
import struct
import sys
from array import array
from collections.abc import Callable, Sequence
from itertools import starmap
from typing import Any

from flintlock.common.speedups import accelerator
from flintlock.common.typeinfo import BasicType, BasicTypeInfo, TupleTypeInfo, TypeInformation
from flintlock.runtime.network.serialization import CorruptChannelDataError

MAGIC = 0xF1
_HAS_RUN = 1
_U32 = struct.Struct("<I")
_HEADER = struct.Struct("<BB")
_NUL = "\x00"
_SWAP = sys.byteorder == "big"  # chunks are little-endian on every machine

_FIXED_CODES: dict[BasicType, str] = {
    BasicType.LONG: "q", BasicType.INT: "i", BasicType.SHORT: "h", BasicType.BYTE: "b",
    BasicType.DOUBLE: "d", BasicType.FLOAT: "f",
}
_CONVERTING_CODES = frozenset("df")
_COLUMN_CODES = frozenset(["q", "i", "h", "b", "d", "f", "s", "S", "?", "p"])
_SEQUENCES = frozenset({tuple, list})  # what a TUPLE's record may be (a list becomes a tuple)


class CodecMismatch(Exception):
    """A batch does not fit the codec's layout (raised while encoding; the serializer then
    finds the offending record with the type's own diagnosis)."""


# -- columns ---------------------------------------------------------------------------------

def _encode_fixed(code: str, values: Sequence[Any]) -> tuple[str, bytes]:
    if code == "q" and accelerator is not None and type(values) is list:
        packed = accelerator.pack_longs(values)  # None unless every value is an int
        if packed is not None:
            return code, packed
    column = array(code, values)
    if _SWAP:
        column.byteswap()
    return code, column.tobytes()


def _decode_fixed(code: str, payload: memoryview) -> list[Any]:
    column = array(code)
    column.frombytes(payload)
    if _SWAP:
        column.byteswap()
    return column.tolist()


def _encode_text(values: Sequence[Any]) -> tuple[str, bytes]:
    joined = _NUL.join(values)  # TypeError unless every value is a str
    if joined.count(_NUL) == len(values) - 1:
        return "s", joined.encode("utf-8", "surrogatepass")
    return "S", pickle.dumps(list(map(str, values)), 5)


def _decode_text(payload: memoryview) -> list[str]:
    return str(payload, "utf-8", "surrogatepass").split(_NUL)


def _encode_bools(values: Sequence[Any]) -> tuple[str, bytes]:
    if not {type(value) for value in values} <= {bool}:
        raise CodecMismatch("expected bool")
    return "?", bytes(values)


class _ColumnEncoder:
    """Encodes one column of values of a basic type; ``code`` says which layout."""

    __slots__ = ("encode",)

    def __init__(self, encode: Callable[[Sequence[Any]], tuple[str, bytes]]) -> None:
        self.encode = encode


def _column_encoder(type_info: TypeInformation) -> _ColumnEncoder | None:
    if not isinstance(type_info, BasicTypeInfo):
        return None
    kind = type_info.basic_type
    code = _FIXED_CODES.get(kind)
    if code is not None:
        return _ColumnEncoder(lambda values: _encode_fixed(code, values))
    if kind is BasicType.STRING:
        return _ColumnEncoder(_encode_text)
    if kind is BasicType.BOOLEAN:
        return _ColumnEncoder(_encode_bools)
    return None


def _decode_column(code: str, payload: memoryview, count: int) -> list[Any]:
    if code not in _COLUMN_CODES:  # never unpickle a column this codec did not write
        raise ValueError(f"unknown typed column code {code!r}")
    if count == 0:
        return []
    if code == "s":
        return _decode_text(payload)
    if code in "qihbdf":
        return _decode_fixed(code, payload)
    if code == "?":
        return list(map(bool, payload))
    return pickle.loads(payload)  # type: ignore[no-any-return]  # 'S' and 'p'


# -- plans -----------------------------------------------------------------------------------

class CodecPlan:
    """How one declared type's batches are laid out; built once per edge, and used by the one
    thread that owns the edge's serializer (a rows plan remembers its last width)."""

    __slots__ = ("check", "converts", "encode_block")

    def __init__(self, encode_block: Callable[[Sequence[Any]], list[bytes]],
                 converts: bool, check: Callable[[Sequence[Any]], object] | None = None
                 ) -> None:
        self.encode_block = encode_block
        self.converts = converts
        """Whether decoding can change a value that passed (int → float, list → tuple)."""
        self.check = check
        """A cheaper routine that fails exactly where ``encode_block`` would, without building
        bytes (None: encode to check); a chain's edge into a sink uses it."""


def _scalar_plan(encoder: _ColumnEncoder, converts: bool,
                 check: Callable[[Sequence[Any]], object] | None = None) -> CodecPlan:
    def encode_block(values: Sequence[Any]) -> list[bytes]:
        code, payload = encoder.encode(values)
        return _block(f"V{code}", len(values), [payload])

    return CodecPlan(encode_block, converts, check)


def _check_text(values: Sequence[Any]) -> object:
    return _NUL.join(values)  # TypeError unless every value is a str, as _encode_text


_NARROWER = "bhiq"  # integer codes from the narrowest; a field never goes wider than declared
RETRY_NARROWER_EVERY = 64
"""Batches a rows plan packs at one width before it tries the next narrower one again."""


def _row_widths(codes: str) -> list[str]:
    """The struct codes a batch of rows may be packed with, narrowest first: every integer
    field at one, two, four bytes, then as declared (other fields as declared)."""
    widths = []
    for limit in _NARROWER:
        narrowed = "".join(min(code, limit, key=_NARROWER.index) if code in _NARROWER else code
                           for code in codes)
        if narrowed not in widths:
            widths.append(narrowed)
    return widths


def _rows_plan(codes: str, converts: bool) -> CodecPlan:
    """Rows of fixed-width fields: packed by the C accelerator where it was built, else by
    ``struct`` (``_struct_rows_plan``); both write the same layout."""
    if accelerator is None:
        return _struct_rows_plan(codes, converts)
    pack_rows = accelerator.pack_rows

    def encode_block(values: Sequence[Any]) -> list[bytes]:
        used, payload = pack_rows(codes, values)  # each integer column as narrow as it fits
        return _block("R" + used, len(values), [payload])

    return CodecPlan(encode_block, converts)


def _struct_rows_plan(codes: str, converts: bool) -> CodecPlan:
    """Rows of fixed-width fields packed with ``struct``. Integer fields are packed as narrow
    as the batch allows (a batch of small counts takes 2 bytes a field instead of 8, less
    than pickle's): the plan remembers the narrowest width that fitted, widens when a value
    does not fit (``struct`` refuses it), and every ``RETRY_NARROWER_EVERY`` batches tries
    one step narrower again. The width is in the block's schema, so readers need nothing."""
    packs = [("R" + width, struct.Struct("<" + width).pack) for width in _row_widths(codes)]
    widest = len(packs) - 1
    state = [0, 0]  # [index into packs that fitted last, batches packed since it changed]

    def encode_block(values: Sequence[Any]) -> list[bytes]:
        _check_sequences(values)
        index, packed = state
        if packed >= RETRY_NARROWER_EVERY and index > 0:
            index, packed = index - 1, 0
        while True:
            schema, pack = packs[index]
            try:
                payload = b"".join(starmap(pack, values))
            except struct.error:
                if index == widest:
                    raise
                index, packed = index + 1, 0
                continue
            state[0], state[1] = index, packed + 1
            return _block(schema, len(values), [payload])

    return CodecPlan(encode_block, converts)


def _columns_plan(encoders: list[_ColumnEncoder], converts: bool) -> CodecPlan:
    arity = len(encoders)

    def encode_block(values: Sequence[Any]) -> list[bytes]:
        if not values:
            return _block("C" + "p" * arity, 0, [b""] * arity)
        columns = _transpose(values, arity)
        codes, payloads = [], []
        for encoder, column in zip(encoders, columns, strict=True):
            code, payload = encoder.encode(column)
            codes.append(code)
            payloads.append(payload)
        return _block("C" + "".join(codes), len(values), payloads)

    return CodecPlan(encode_block, converts)


def _transpose(values: Sequence[Any], arity: int) -> Sequence[Sequence[Any]]:
    """The records' fields as columns; every record a tuple or list of ``arity`` fields (in C
    where the accelerator was built: a type scan and a ``zip`` cost 47 ns a record)."""
    if accelerator is not None:
        return accelerator.transpose(values, arity)  # type: ignore[no-any-return]
    _check_sequences(values)
    columns = list(zip(*values, strict=True))
    if len(columns) != arity:
        raise CodecMismatch(f"expected {arity} fields")
    return columns


def _check_sequences(values: Sequence[Any]) -> None:
    if not _SEQUENCES.issuperset(map(type, values)):
        raise CodecMismatch("expected tuples or lists")


def compile_plan(type_info: TypeInformation | None) -> CodecPlan | None:
    """The plan for ``type_info``, or None when its batches are pickled."""
    if type_info is None:
        return None
    if isinstance(type_info, BasicTypeInfo):
        encoder = _column_encoder(type_info)
        if encoder is None:
            return None
        text = type_info.basic_type is BasicType.STRING
        return _scalar_plan(encoder, _converts([type_info]), _check_text if text else None)
    if isinstance(type_info, TupleTypeInfo):
        fields = type_info.get_field_types()
        if not fields:
            return None
        codes = [_FIXED_CODES.get(f.basic_type) if isinstance(f, BasicTypeInfo) else None
                 for f in fields]
        if all(code is not None for code in codes):
            return _rows_plan("".join(codes), _converts(fields))  # type: ignore[arg-type]
        encoders = [_column_encoder(field) for field in fields]
        if any(encoder is None for encoder in encoders):
            return None
        return _columns_plan(encoders, _converts(fields))  # type: ignore[arg-type]
    return None


def _converts(fields: Sequence[TypeInformation]) -> bool:
    """Whether a value that fits can come back changed: an int in a FLOAT/DOUBLE field
    (the only conversion a reader could notice; int subclasses arrive as int)."""
    return any(isinstance(field, BasicTypeInfo)
               and _FIXED_CODES.get(field.basic_type) in _CONVERTING_CODES for field in fields)


def _block(schema: str, count: int, payloads: list[bytes]) -> list[bytes]:
    parts = [bytes((len(schema),)), schema.encode("ascii"), _U32.pack(count)]
    for payload in payloads:
        parts.append(_U32.pack(len(payload)))
        parts.append(payload)
    return parts


# -- chunks ----------------------------------------------------------------------------------

def encode_chunk(plan: CodecPlan, values: Sequence[Any],
                 run: tuple[Sequence[Any], Sequence[int]] | None = None) -> bytes:
    """One typed chunk: ``values``, then optionally one run of timestamped values. Raises
    ``CodecMismatch`` (or the ``TypeError`` / ``ValueError`` / ``OverflowError`` /
    ``struct.error`` of the C routine that refused a value) if a record does not fit."""
    parts = [_HEADER.pack(MAGIC, _HAS_RUN if run is not None else 0)]
    parts += plan.encode_block(values)
    if run is not None:
        run_values, timestamps = run
        parts += plan.encode_block(run_values)
        parts += _block("Vq", len(timestamps), [_encode_fixed("q", timestamps)[1]])
    return b"".join(parts)


def is_typed_chunk(data: memoryview | bytes | bytearray) -> bool:
    return len(data) > 0 and data[0] == MAGIC


def decode_chunk(data: memoryview | bytes | bytearray
                 ) -> tuple[list[Any], tuple[list[Any], list[int]] | None]:
    """``(values, run)`` of a typed chunk; ``run`` is ``(values, timestamps)`` or None.
    Raises ``CorruptChannelDataError`` if the bytes are not a whole, well-formed chunk."""
    try:
        return _decode_chunk(memoryview(data).cast("B"))
    except (ValueError, IndexError, struct.error, pickle.UnpicklingError, EOFError) as error:
        raise CorruptChannelDataError(f"malformed typed chunk: {error}") from error


def _decode_chunk(view: memoryview) -> tuple[list[Any], tuple[list[Any], list[int]] | None]:
    magic, flags = _HEADER.unpack_from(view, 0)
    if magic != MAGIC:
        raise ValueError(f"not a typed chunk (first byte {magic:#x})")
    values, position = _decode_block(view, _HEADER.size)
    run = None
    if flags & _HAS_RUN:
        run_values, position = _decode_block(view, position)
        timestamps, position = _decode_block(view, position)
        if len(timestamps) != len(run_values):
            raise ValueError(f"a run of {len(run_values)} values with {len(timestamps)} "
                             "timestamps")
        run = (run_values, timestamps)
    if position != len(view):
        raise ValueError(f"{len(view) - position} bytes after the last block of a typed chunk")
    return values, run


def _decode_block(view: memoryview, position: int) -> tuple[list[Any], int]:
    schema_len = view[position]
    position += 1
    schema = bytes(view[position:position + schema_len]).decode("ascii")
    position += schema_len
    (count,) = _U32.unpack_from(view, position)
    position += _U32.size
    payloads = []
    for _ in range(1 if schema[0] in "VR" else len(schema) - 1):
        (size,) = _U32.unpack_from(view, position)
        position += _U32.size
        if position + size > len(view):
            raise ValueError("a typed chunk ends inside a column")
        payloads.append(view[position:position + size])
        position += size
    values = _decode_values(schema, payloads, count)
    if len(values) != count:
        raise ValueError(f"a typed block announced {count} records but holds {len(values)}")
    return values, position


def _decode_values(schema: str, payloads: list[memoryview], count: int) -> list[Any]:
    layout, codes = schema[0], schema[1:]
    if layout == "V":
        return _decode_column(codes, payloads[0], count)
    if layout == "R":
        if not count:
            return []
        if accelerator is not None:  # records the cycle collector need not visit
            return accelerator.unpack_rows(codes, payloads[0])  # type: ignore[no-any-return]
        return list(struct.iter_unpack("<" + codes, payloads[0]))
    if layout == "C":
        columns = [_decode_column(code, payload, count)
                   for code, payload in zip(codes, payloads, strict=True)]
        return list(zip(*columns, strict=True)) if count else []
    raise ValueError(f"unknown typed block layout {layout!r}")


ENCODE_ERRORS = (CodecMismatch, TypeError, ValueError, OverflowError, struct.error)
"""What a plan raises for a record that does not fit it."""
