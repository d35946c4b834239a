"""Handles to state written into checkpoint storage, and the error for a damaged one.

A handle is a small, picklable value that a TaskManager sends to the JobManager with its ack
and that the restore path reads back. The bytes it names carry a checksum: reading verifies
it, so a truncated or altered file is a ``CorruptStateError`` naming the file, never silently
restored.
"""

from __future__ import annotations

from dataclasses import dataclass

from flintlock.common.errors import FlintlockError


@dataclass(frozen=True, slots=True)
class StreamStateHandle:
    """One file (or object) in checkpoint storage: where it is, how big, its SHA-256."""

    uri: str
    size: int
    sha256: str


@dataclass(frozen=True, slots=True)
class ByteStateHandle:
    """Small state kept inline in the checkpoint metadata instead of a file of its own."""

    data: bytes

    @property
    def size(self) -> int:
        return len(self.data)


StateHandle = StreamStateHandle | ByteStateHandle


class CorruptStateError(FlintlockError):
    """A state or metadata file is missing, truncated or altered. Names the file."""

    def __init__(self, uri: str, detail: str) -> None:
        super().__init__(uri, detail)
        self.uri = uri
        self.detail = detail

    def __str__(self) -> str:
        return f"corrupt checkpoint file {self.uri}: {self.detail}"
