"""``ChangelogRowTypeInfo``: the declared type of the Table layer's internal streams.

Records between the operators the Table planner builds are ``Row`` objects holding a value
list and a ``RowKind`` (+I, -U, +U, -D), no field names. Declaring this type on those edges
lets the exchange send a batch as one byte string of row kinds and one list of value lists
(``runtime.network.changelog_serializer``), instead of pickling every ``Row`` through its
``__reduce__``; nothing is checked per record (these streams are the planner's own). For
everything else it behaves as ``Types.PICKLED_BYTE_ARRAY()``.
"""

from __future__ import annotations

from flintlock.common.typeinfo import PickledBytesTypeInfo


class ChangelogRowTypeInfo(PickledBytesTypeInfo):
    """Rows with a row kind and positional values, as the Table planner's operators pass them."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "ChangelogRowTypeInfo()"


CHANGELOG_ROWS = ChangelogRowTypeInfo()
