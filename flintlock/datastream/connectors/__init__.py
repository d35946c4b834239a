"""Connectors under PyFlink's module path (``pyflink.datastream.connectors``)."""

from flintlock.datastream.connectors.base import Sink, Source

__all__ = ["Sink", "Source"]
