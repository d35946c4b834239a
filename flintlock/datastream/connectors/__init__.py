"""Connectors under PyFlink's module path (``pyflink.datastream.connectors``).

The concrete connectors live in their PyFlink submodules (``file_system``, ``number_seq``,
``kafka``) and in ``redis`` (flintlock's own); the names PyFlink re-exports here are
re-exported too. The file connectors are loaded when one of their names is first asked for
(PEP 562): they bring in fsspec, which a job or a TaskManager without files does not need
(20-30 ms of every process's start otherwise).
"""

from typing import TYPE_CHECKING, Any

from flintlock.datastream.connectors.base import DeliveryGuarantee, Sink, Source
from flintlock.datastream.connectors.number_seq import NumberSequenceSource

if TYPE_CHECKING:
    from flintlock.datastream.connectors.file_system import (
        BucketAssigner,
        FileSink,
        FileSource,
        OutputFileConfig,
        RollingPolicy,
        StreamFormat,
    )

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


def __getattr__(name: str) -> Any:
    """The exported names not imported above: the file connectors'."""
    if name in __all__:
        from flintlock.datastream.connectors import file_system

        return getattr(file_system, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
