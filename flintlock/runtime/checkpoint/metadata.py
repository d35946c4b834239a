"""The ``_metadata`` file: a completed checkpoint serialised in a checksummed envelope.

Format (all integers big-endian)::

    magic    8 bytes   b"FLKCKPT\\0"
    version  u32       FORMAT_VERSION
    length   u64       payload length in bytes
    sha256   32 bytes  SHA-256 of the payload
    payload  pickle    the ``CompletedCheckpoint`` (with its task states)

The payload is unpickled only after the magic, version, length and checksum all match, so a
truncated, altered or foreign file is a ``CorruptStateError`` naming it and never half-read.
The checksum detects damage; it does not authenticate the writer. Only the job's own driver
and TaskManagers may write the checkpoint directory (see ``storage``): loading a checkpoint
runs the pickle in it, as loading the job's code does.

Who calls it: the completed-checkpoint store (writing and recovering), ``resolve_savepoint``
for a restore from a user-given path. Stateless.
"""

from __future__ import annotations

import dataclasses
import hashlib
import pickle
import struct

from flintlock.runtime.checkpoint.completed import CompletedCheckpoint
from flintlock.runtime.checkpoint.handles import CorruptStateError
from flintlock.runtime.checkpoint.storage import (
    METADATA_FILE,
    CheckpointStorageLocation,
    join,
    read_verified,
    resolve,
)

MAGIC = b"FLKCKPT\0"
FORMAT_VERSION = 1
_HEADER = struct.Struct(">8sIQ32s")


def encode(checkpoint: CompletedCheckpoint) -> bytes:
    payload = pickle.dumps(checkpoint, protocol=5)
    digest = hashlib.sha256(payload).digest()
    return _HEADER.pack(MAGIC, FORMAT_VERSION, len(payload), digest) + payload


def decode(data: bytes, uri: str) -> CompletedCheckpoint:
    """The checkpoint in ``data`` (read from ``uri``), or ``CorruptStateError`` naming it."""
    if len(data) < _HEADER.size:
        raise CorruptStateError(uri, f"only {len(data)} bytes: shorter than the header")
    magic, version, length, digest = _HEADER.unpack_from(data)
    if magic != MAGIC:
        raise CorruptStateError(uri, "not a flintlock checkpoint metadata file (bad magic)")
    if version != FORMAT_VERSION:
        raise CorruptStateError(uri, f"unsupported metadata format version {version}")
    payload = data[_HEADER.size :]
    if len(payload) != length:
        raise CorruptStateError(uri, f"payload is {len(payload)} bytes, header says {length}")
    if hashlib.sha256(payload).digest() != digest:
        raise CorruptStateError(uri, "SHA-256 mismatch: the metadata was altered")
    try:
        checkpoint = pickle.loads(payload)
    except Exception as exc:
        raise CorruptStateError(uri, f"payload does not unpickle: {exc!r}") from exc
    if not isinstance(checkpoint, CompletedCheckpoint):
        raise CorruptStateError(uri, f"payload is a {type(checkpoint).__name__}")
    return checkpoint


def write_metadata(checkpoint: CompletedCheckpoint) -> None:
    """Write ``checkpoint`` to its ``metadata_path`` atomically (temp, fsync, rename)."""
    location = CheckpointStorageLocation(
        checkpoint.location, checkpoint.checkpoint_id, checkpoint.is_savepoint
    )
    location.write_metadata(encode(checkpoint))


def read_metadata(metadata_uri: str) -> CompletedCheckpoint:
    """Load and verify one ``_metadata`` file."""
    return decode(read_verified(metadata_uri, None, None), metadata_uri)


def resolve_savepoint(path: str) -> CompletedCheckpoint:
    """Load a savepoint or retained checkpoint from its directory or its ``_metadata`` path.

    The returned checkpoint's ``location`` and ``metadata_path`` are where it was found.
    """
    fs, fs_path = resolve(path)
    stripped = path.rstrip("/")
    if fs.isdir(fs_path):
        directory, metadata_uri = stripped, join(stripped, METADATA_FILE)
    elif not fs.exists(fs_path):
        raise CorruptStateError(path, "no savepoint or checkpoint here (no such directory)")
    else:
        metadata_uri = stripped
        directory = stripped.rsplit("/", 1)[0] if "/" in stripped else "."
    checkpoint = read_metadata(metadata_uri)
    return dataclasses.replace(checkpoint, location=directory, metadata_path=metadata_uri)
