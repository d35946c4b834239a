"""The Nexmark benchmark's event stream (people, auctions and bids of an online auction), as
Flink's and Beam's Nexmark suites generate it: ``NexmarkSource`` for ``env.from_source`` and
the generator the ``nexmark`` table connector and ``benchmarks/nexmark`` share.

Modules: ``config`` (options, event kinds, event time), ``generator`` (the events, a pure
function of the event number), ``_random`` (per-event random bits and text pools), ``model``
(the DataStream records), ``source`` (splits, reader, source). Imports only
``flintlock.common`` and ``flintlock.datastream.connectors``.
"""

from flintlock.datastream.connectors.nexmark.config import NexmarkConfig, from_options
from flintlock.datastream.connectors.nexmark.model import Auction, Bid, Event, Person
from flintlock.datastream.connectors.nexmark.source import NexmarkSource

__all__ = ["Auction", "Bid", "Event", "NexmarkConfig", "NexmarkSource", "Person",
           "from_options"]
