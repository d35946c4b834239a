"""``TypeSerializer``: the base of PyFlink's serializers (``pyflink.common.serializer``).

flintlock moves values between processes with its own codecs (pickle, or a typed codec per
edge), so nothing in the runtime asks a ``TypeSerializer`` to write a record; the class exists
so that user code written for PyFlink — a custom ``WindowAssigner`` whose
``get_window_serializer`` returns one, a serializer of its own — imports and runs unchanged,
and a serializer still writes and reads its values to and from a binary stream when called.
Kept in its own module so ``windowing`` can subclass it while ``serializer`` re-exports both.
"""

from __future__ import annotations

import abc
from typing import BinaryIO, Generic, TypeVar

T = TypeVar("T")


class TypeSerializer(abc.ABC, Generic[T]):
    """Writes values of one type to a binary stream and reads them back. Serializers of the
    same class are equal (they hold no state), as in PyFlink."""

    @abc.abstractmethod
    def serialize(self, element: T, stream: BinaryIO) -> None:
        """Write ``element`` to ``stream``."""

    @abc.abstractmethod
    def deserialize(self, stream: BinaryIO) -> T:
        """Read one value from ``stream``."""

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self)

    def __ne__(self, other: object) -> bool:
        return not self == other

    def __hash__(self) -> int:
        return hash(type(self))

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


def read_exactly(stream: BinaryIO, size: int, what: str) -> bytes:
    """``size`` bytes from ``stream``; a shorter read is a ``ValueError`` naming ``what``."""
    data = stream.read(size)
    if len(data) != size:
        raise ValueError(f"truncated {what}: expected {size} bytes, got {len(data)}")
    return data


__all__ = ["TypeSerializer", "read_exactly"]

