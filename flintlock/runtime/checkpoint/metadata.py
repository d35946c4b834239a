"""The ``_metadata`` file: a completed checkpoint in a checksummed, versioned envelope.

Envelope (all integers big-endian)::

    magic    8 bytes   b"FLKCKPT\\0"
    version  u32       the format of the payload
    length   u64       payload length in bytes
    sha256   32 bytes  SHA-256 of the payload
    payload            as the version says

Versions (docs/internals/savepoint-format.md):

* 3 (``FORMAT_VERSION``, written since 2026-11-28, issue 27): format 2 whose
  ``rocksdb-incremental`` keyed state names the encoding of the keys in its database
  (``key_encoding``); a format-2 incremental state's keys are pickles, and the RocksDB backend
  migrates such a database on restore instead of adopting it.
* 2 (2026-11-25 to 2026-11-28): a JSON document naming every field
  (``metadata_json``), independent of the classes that hold a checkpoint in memory; state
  files by paths relative to the checkpoint's directory. Committed by a marker
  (``storage.verify_committed``): a ``_metadata`` of format 2 or later without its
  ``_metadata.committed`` beside it is a checkpoint that never completed.
* 1 (until 2026-11-25): a pickled ``CompletedCheckpoint``, read by ``metadata_legacy``
  without importing the classes its pickle names. It was committed by an atomic rename and
  needs no marker.

The payload is parsed only after the magic, length and checksum match and the version is one
of these, so a truncated, altered, foreign or newer file is a ``CorruptStateError`` naming it
and never half-read. The checksum detects damage; it does not authenticate the writer: only
the job's own driver and TaskManagers may write the checkpoint directory (see ``storage``).

Who calls it: the coordinator (a savepoint's metadata), the completed-checkpoint store
(writing and recovering), ``resolve_savepoint`` for a restore from a user-given path.
Stateless.
"""

from __future__ import annotations

import hashlib
import struct

from flintlock.runtime.checkpoint import metadata_json, metadata_legacy
from flintlock.runtime.checkpoint.completed import CompletedCheckpoint
from flintlock.runtime.checkpoint.storage import (
    METADATA_FILE,
    CheckpointStorageLocation,
    join,
    read_verified,
    resolve,
    verify_committed,
)
from flintlock.runtime.state.handles import CorruptStateError

MAGIC = b"FLKCKPT\0"
PICKLE_FORMAT = 1
JSON_FORMAT = 2
KEY_ENCODING_FORMAT = metadata_json.KEY_ENCODING_VERSION
FORMAT_VERSION = KEY_ENCODING_FORMAT
_KNOWN = (PICKLE_FORMAT, JSON_FORMAT, KEY_ENCODING_FORMAT)
_HEADER = struct.Struct(">8sIQ32s")


def encode(checkpoint: CompletedCheckpoint) -> bytes:
    """``checkpoint`` as the bytes of a ``_metadata`` file of the current format."""
    return wrap(FORMAT_VERSION, metadata_json.dumps(checkpoint))


def wrap(version: int, payload: bytes) -> bytes:
    """The envelope around ``payload``."""
    digest = hashlib.sha256(payload).digest()
    return _HEADER.pack(MAGIC, version, len(payload), digest) + payload


def unwrap(data: bytes, uri: str) -> tuple[int, bytes]:
    """(version, payload) of a verified envelope, or ``CorruptStateError`` naming ``uri``."""
    if len(data) < _HEADER.size:
        raise CorruptStateError(uri, f"only {len(data)} bytes: shorter than the header")
    magic, version, length, digest = _HEADER.unpack_from(data)
    if magic != MAGIC:
        raise CorruptStateError(uri, "not a flintlock checkpoint metadata file (bad magic)")
    if version not in _KNOWN:
        newer = " (written by a newer flintlock?)" if version > FORMAT_VERSION else ""
        raise CorruptStateError(uri, f"unsupported metadata format version {version}{newer}")
    payload = data[_HEADER.size :]
    if len(payload) != length:
        raise CorruptStateError(uri, f"payload is {len(payload)} bytes, header says {length}")
    if hashlib.sha256(payload).digest() != digest:
        raise CorruptStateError(uri, "SHA-256 mismatch: the metadata was altered")
    return version, payload


def decode(data: bytes, uri: str) -> CompletedCheckpoint:
    """The checkpoint in ``data`` (read from ``uri``; its ``location`` is ``uri``'s
    directory), or ``CorruptStateError`` naming it. Does not look for the commit marker."""
    version, payload = unwrap(data, uri)
    directory = uri.rsplit("/", 1)[0] if "/" in uri else "."
    if version == PICKLE_FORMAT:
        return metadata_legacy.loads(payload, uri, directory)
    return metadata_json.loads(payload, uri, directory, version)


def write_metadata(checkpoint: CompletedCheckpoint) -> None:
    """Write ``checkpoint``'s ``_metadata`` into its location, then its commit marker."""
    location = CheckpointStorageLocation(
        checkpoint.location, checkpoint.checkpoint_id, checkpoint.is_savepoint
    )
    location.commit_metadata(encode(checkpoint))


def read_metadata(metadata_uri: str) -> CompletedCheckpoint:
    """Load and verify one committed ``_metadata`` file: ``CorruptStateError`` for a damaged
    one, ``UncommittedCheckpointError`` for one whose commit never finished."""
    data = read_verified(metadata_uri, None, None)
    version, _ = unwrap(data, metadata_uri)
    if version != PICKLE_FORMAT:
        verify_committed(metadata_uri, data)
    return decode(data, metadata_uri)


def resolve_savepoint(path: str) -> CompletedCheckpoint:
    """Load a savepoint or retained checkpoint from its directory or its ``_metadata`` path.

    The returned checkpoint's ``location`` and ``metadata_path`` are where it was found, and
    its state files are looked up there.
    """
    fs, fs_path = resolve(path)
    stripped = path.rstrip("/")
    if fs.isdir(fs_path):
        metadata_uri = join(stripped, METADATA_FILE)
    elif not fs.exists(fs_path):
        raise CorruptStateError(path, "no savepoint or checkpoint here (no such directory)")
    else:
        metadata_uri = stripped if "/" in stripped else f"./{stripped}"
    return read_metadata(metadata_uri)
