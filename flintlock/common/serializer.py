"""PyFlink's ``pyflink.common.serializer``: ``TypeSerializer`` and the window serializers a
custom ``WindowAssigner.get_window_serializer`` returns (also importable from
``flintlock.datastream.window``, as in PyFlink). flintlock pickles windows itself and never
calls them; they exist so such assigners run unchanged (see ``type_serializer``)."""

from flintlock.common.type_serializer import TypeSerializer
from flintlock.common.windowing import (
    CountWindowSerializer,
    GlobalWindowSerializer,
    TimeWindowSerializer,
)

__all__ = [
    "CountWindowSerializer", "GlobalWindowSerializer", "TimeWindowSerializer", "TypeSerializer",
]
