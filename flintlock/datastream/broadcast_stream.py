"""``BroadcastStream`` and ``BroadcastConnectedStream``: PyFlink's broadcast state pattern.

``DataStream.broadcast(MapStateDescriptor, ...)`` gives a ``BroadcastStream``: the stream with
a BROADCAST partitioner (every parallel instance of the next operator gets every element) and
the descriptors of the broadcast state. ``stream.connect(broadcast_stream)`` gives a
``BroadcastConnectedStream``, whose ``process`` takes a ``BroadcastProcessFunction`` (a
non-keyed first stream) or a ``KeyedBroadcastProcessFunction`` (a keyed first stream) and adds
one two-input operator: input 0 is the first stream, input 1 the broadcast one.

Owned by the user's thread while the job is built.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from flintlock.common.operator_spec import OperatorKind, OperatorSpec
from flintlock.common.state import MapStateDescriptor
from flintlock.common.typeinfo import TypeInformation
from flintlock.datastream import functions as fn
from flintlock.datastream.errors import ForeignStreamError, KeyedStreamRequiredError

if TYPE_CHECKING:
    from flintlock.datastream.data_stream import DataStream


class BroadcastStream:
    """A stream every parallel instance of the next operator receives in full, with the
    descriptors of the broadcast state it fills."""

    def __init__(self, stream: DataStream, descriptors: tuple[MapStateDescriptor, ...]) -> None:
        for descriptor in descriptors:
            if not isinstance(descriptor, MapStateDescriptor):
                raise TypeError("broadcast() takes MapStateDescriptors (broadcast state is map "
                                f"state), got {descriptor!r}")
        names = [d.name for d in descriptors]
        if len(set(names)) != len(names):
            raise ValueError(f"broadcast(): two descriptors share a name: {names}")
        self._stream = stream
        self.broadcast_state_descriptors = descriptors

    def get_execution_environment(self) -> Any:
        return self._stream.get_execution_environment()


class BroadcastConnectedStream:
    """A stream connected with a broadcast stream; ``process`` turns it into one stream."""

    def __init__(self, non_broadcast: DataStream, broadcast: BroadcastStream) -> None:
        self._stream = non_broadcast
        self._broadcast = broadcast

    def process(self, func: fn.BroadcastProcessFunction | fn.KeyedBroadcastProcessFunction,
                output_type: TypeInformation | None = None) -> DataStream:
        function = fn.require(func, (fn.BroadcastProcessFunction,
                                     fn.KeyedBroadcastProcessFunction),
                              "BroadcastConnectedStream.process")
        keyed = self._stream._is_keyed
        if isinstance(function, fn.KeyedBroadcastProcessFunction) and not keyed:
            raise KeyedStreamRequiredError("process(KeyedBroadcastProcessFunction) on the "
                                           "non-broadcast stream")
        if keyed and not isinstance(function, fn.KeyedBroadcastProcessFunction):
            raise fn.FunctionTypeError("BroadcastConnectedStream.process",
                                       "a KeyedBroadcastProcessFunction for a keyed stream",
                                       type(function).__name__)
        kind = OperatorKind.KEYED_BROADCAST_PROCESS if keyed else OperatorKind.BROADCAST_PROCESS
        spec = OperatorSpec(kind, function=function, output_type=output_type, keyed=keyed,
                            broadcast_states=self._broadcast.broadcast_state_descriptors)
        inputs = [(stream_input, 0) for stream_input in self._stream._inputs]
        inputs += [(stream_input, 1) for stream_input in self._broadcast._stream._inputs]
        selectors = (*self._stream._key_selectors(), None) if keyed else ()
        return self._stream._output_of("Broadcast" + ("Keyed" if keyed else "") + "Process",
                                       spec, inputs, "BroadcastConnectedStream.process",
                                       key_selectors=selectors)


def connect_broadcast(stream: DataStream, broadcast: BroadcastStream
                      ) -> BroadcastConnectedStream:
    if broadcast._stream._env is not stream._env:
        raise ForeignStreamError("connect()")
    return BroadcastConnectedStream(stream, broadcast)


__all__ = ["BroadcastConnectedStream", "BroadcastStream"]
