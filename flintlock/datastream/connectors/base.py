"""Connector base classes: ``Source`` (for ``env.from_source``) and ``Sink`` (for
``DataStream.sink_to``).

Concrete connectors (files, number sequences, Redis) subclass them; the contract a connector
implements towards the runtime is defined with the runtime (issue #4). The API only checks the
type and carries the object, unchanged, in the operator description.
"""

from __future__ import annotations


class Source:
    """Base of every source connector usable with ``env.from_source``."""

    def is_bounded(self) -> bool:
        """Whether the source ends on its own (bounded) or runs forever."""
        return False


class Sink:
    """Base of every sink connector usable with ``DataStream.sink_to``."""

