"""PyFlink's ``pyflink.common.serialization``: how records become bytes for connectors.

``Encoder`` turns one record into the bytes a row-format ``FileSink`` appends to a part file
(``Encoder.simple_string_encoder()``: ``str(record)`` in a charset plus a newline, as Flink's
``SimpleStringEncoder``). ``SimpleStringSchema`` is the string (de)serialization schema that
connectors taking a schema accept (a ``SerializationSchema`` and a ``DeserializationSchema``,
PyFlink's base classes): ``serialize(str) -> bytes``, ``deserialize(bytes) -> str``.

Both are immutable, picklable values (they travel inside the job to every TaskManager); the
charset is checked when the value is created, so a typo fails in the user's program, not on
an executor. No thread owns anything here.
"""

from __future__ import annotations

import codecs
from typing import Any

from flintlock.common.errors import FlintlockError
from flintlock.common.print_format import java_string
from flintlock.common.typeinfo import BasicType, BasicTypeInfo


class UnknownCharsetError(FlintlockError, LookupError):
    """A charset name Python's codecs do not know."""

    def __init__(self, charset: str) -> None:
        super().__init__(charset)
        self.charset = charset

    def __str__(self) -> str:
        return f"unknown charset {self.charset!r} (use a Python codec name such as 'UTF-8')"


def checked_charset(charset: str) -> str:
    """``charset`` if Python knows it, else ``UnknownCharsetError``."""
    try:
        codecs.lookup(charset)
    except (LookupError, TypeError):
        raise UnknownCharsetError(charset) from None
    return charset


def _prints_as_str(type_info: Any) -> bool:
    """Whether Java's ``toString`` of every value of ``type_info`` is Python's ``str``: no
    declared type, or text (STRING, CHAR; the chain's edge has checked the values are str)."""
    return type_info is None or (isinstance(type_info, BasicTypeInfo) and type_info.basic_type
                                 in (BasicType.STRING, BasicType.CHAR))


class Encoder:
    """Writes one record as bytes (row formats of the ``FileSink``).

    A record of a *declared* type is written as PyFlink writes it — Java's ``toString`` of the
    value PyFlink hands to Java (``(a,3)`` for a TUPLE, ``+I[a,3]`` for a ROW); a record of no
    declared type as Python's ``str``. The sink tells the encoder its stream's type
    (``for_type``)."""

    def __init__(self, charset_name: str = "UTF-8", type_info: Any = None) -> None:
        self._charset = checked_charset(charset_name)
        self._type_info = type_info
        self._plain = _prints_as_str(type_info)

    @staticmethod
    def simple_string_encoder(charset_name: str = "UTF-8") -> Encoder:
        """The record's text encoded in ``charset_name``, followed by a newline."""
        return Encoder(charset_name)

    def for_type(self, type_info: Any) -> Encoder:
        """This encoder for a stream of ``type_info`` (None: undeclared)."""
        return Encoder(self._charset, type_info)

    @property
    def charset(self) -> str:
        return self._charset

    def _text(self, record: Any) -> str:
        if self._plain:
            return str(record)
        return java_string(record, self._type_info)

    def encode(self, record: Any) -> bytes:
        return (self._text(record) + "\n").encode(self._charset)

    def encode_all(self, records: list[Any]) -> bytes:
        """The concatenated encodings of ``records`` (one call per batch; for undeclared and
        STRING streams no Python code runs per record)."""
        if not records:
            return b""
        text = map(str, records) if self._plain else map(self._text, records)
        return ("\n".join(text) + "\n").encode(self._charset)

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, Encoder) and other._charset == self._charset
                and other._type_info == self._type_info)

    def __hash__(self) -> int:
        return hash(("Encoder", self._charset))

    def __repr__(self) -> str:
        return f"Encoder.simple_string_encoder({self._charset!r})"


class SerializationSchema:
    """Base of the schemas that turn a record into bytes for a connector (``serialize``)."""


class DeserializationSchema:
    """Base of the schemas that turn a connector's bytes into a record (``deserialize``)."""


class SimpleStringSchema(SerializationSchema, DeserializationSchema):
    """Strings to and from bytes in one charset (Flink's ``SimpleStringSchema``)."""

    def __init__(self, charset: str = "UTF-8") -> None:
        self._charset = checked_charset(charset)

    @property
    def charset(self) -> str:
        return self._charset

    def serialize(self, value: str) -> bytes:
        return value.encode(self._charset)

    def deserialize(self, data: bytes) -> str:
        return data.decode(self._charset)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, SimpleStringSchema) and other._charset == self._charset

    def __hash__(self) -> int:
        return hash(("SimpleStringSchema", self._charset))

    def __repr__(self) -> str:
        return f"SimpleStringSchema({self._charset!r})"


class ByteArraySchema(SerializationSchema, DeserializationSchema):
    """Bytes as they are (Flink's ``ByteArraySchema``): for connectors whose records are raw
    ``bytes`` (PyFlink's ``kafka_bytearray_format`` example)."""

    def serialize(self, value: bytes) -> bytes:
        if not isinstance(value, (bytes, bytearray, memoryview)):
            raise TypeError(f"ByteArraySchema serializes bytes, got {type(value).__name__} "
                            "(use SimpleStringSchema for str)")
        return bytes(value)

    def deserialize(self, data: bytes) -> bytes:
        return bytes(data)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ByteArraySchema)

    def __hash__(self) -> int:
        return hash("ByteArraySchema")

    def __repr__(self) -> str:
        return "ByteArraySchema()"
