"""PyFlink's ``pyflink.datastream.connectors.base``: the connector base classes ``Source`` (for
``env.from_source``) and ``Sink`` (for ``DataStream.sink_to``), ``DeliveryGuarantee`` (what a
sink promises after a failure), and the sink preprocessing hook ``SupportsPreprocessing`` /
``StreamTransformer``.

Concrete connectors (files, number sequences, Redis, Kafka) subclass ``Source``/``Sink``; the
contract a connector implements towards the runtime is in ``flintlock.runtime.tasks.sources``.
The API only checks the type and carries the object, unchanged, in the operator description.
A sink that ``SupportsPreprocessing`` and returns a ``StreamTransformer`` has the stream it is
given passed through ``transformer.apply(stream)`` first, in ``sink_to`` (as PyFlink does).

Everything here is a value or a stateless base class; ``DeliveryGuarantee`` is defined here,
where PyFlink defines it, and is the one class every connector uses.
"""

from __future__ import annotations

import abc
import enum
from typing import Any


class Source:
    """Base of every source connector usable with ``env.from_source``."""

    def is_bounded(self) -> bool:
        """Whether the source ends on its own (bounded) or runs forever."""
        return False


class Sink:
    """Base of every sink connector usable with ``DataStream.sink_to``."""


class DeliveryGuarantee(enum.Enum):
    """What a sink promises after a failure."""

    EXACTLY_ONCE = 0  # no loss, no duplicates (two-phase commit on checkpoints)
    AT_LEAST_ONCE = 1  # no loss; records since the last checkpoint may be written again
    NONE = 2  # best effort


class StreamTransformer(abc.ABC):
    """Turns the stream given to a sink into the stream the sink writes."""

    @abc.abstractmethod
    def apply(self, ds: Any) -> Any: ...


class SupportsPreprocessing(abc.ABC):
    """A sink that transforms its input stream before writing it (``sink_to`` applies it)."""

    @abc.abstractmethod
    def get_transformer(self) -> StreamTransformer | None: ...


__all__ = ["DeliveryGuarantee", "Sink", "Source", "StreamTransformer", "SupportsPreprocessing"]
