"""Connectors under PyFlink's module path (``pyflink.datastream.connectors``).

The concrete connectors live in their PyFlink submodules (``file_system``, ``number_seq``,
``kafka``) and in ``redis`` (flintlock's own); the names PyFlink re-exports here are
re-exported too.
"""

from flintlock.datastream.connectors._delivery import DeliveryGuarantee
from flintlock.datastream.connectors.base import Sink, Source
from flintlock.datastream.connectors.file_system import (
    BucketAssigner,
    FileSink,
    FileSource,
    OutputFileConfig,
    RollingPolicy,
    StreamFormat,
)
from flintlock.datastream.connectors.number_seq import NumberSequenceSource

__all__ = [
    "BucketAssigner",
    "DeliveryGuarantee",
    "FileSink",
    "FileSource",
    "NumberSequenceSource",
    "OutputFileConfig",
    "RollingPolicy",
    "Sink",
    "Source",
    "StreamFormat",
]
