"""Which stores can hold the HA lease: the fencing of ``leadership`` relies on one primitive.

Design note. ``FileLease`` needs from ``high-availability.storageDir``:

1. an **atomic create-only write** (``open(path, "xb")``): of two drivers creating the same
   ``lease-<token>``, exactly one succeeds and the other gets ``FileExistsError``. This is what
   makes a fencing token unique. Neither a rename nor a file's modification time is used (an
   object store has no atomic rename; expiry is the time written *in* the lease, by its owner's
   clock);
2. **read-after-write for one named file**: a driver that reads ``lease-<token+1>`` by name
   after another created it finds it. Listings are used only to find where to start; a
   contender then reads the next names one by one (``FileLease._newest``), so a listing that
   lags behind (an eventually consistent one, or a client's listing cache) delays a contender
   but never lets two drivers hold the same token.

Where this holds, and so where the lease is accepted (anything else is refused at start-up
with ``LeaseStorageUnsupportedError``, naming the URL scheme and why):

* ``file`` (local and network filesystems): ``O_CREAT|O_EXCL`` is atomic, also over NFSv3+;
* ``memory`` (fsspec's in-process filesystem, for tests): a dict under a lock;
* ``s3``/``s3a`` through s3fs: a create is a PUT with ``If-None-Match: *``, which S3 evaluates
  atomically (since August 2024) and answers 412 if the key exists; S3 reads by key are
  strongly consistent (since December 2020). S3-compatible servers differ: some ignore the
  precondition and overwrite. So before leading, ``verify_exclusive_create`` creates a probe
  file twice and requires the second create to fail; a store that accepts both is refused.

Other fsspec stores (GCS, Azure, HDFS, ...) may well have the primitive (GCS generation
preconditions, Azure ``If-None-Match``), but the fsspec client's create-only mode has not been
shown to use it here, so they are refused rather than trusted (docs/decisions.md).

Called by ``JobHighAvailability`` on the thread that builds the JobManager; no state.
"""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING

from flintlock.common.errors import ConfigurationError

if TYPE_CHECKING:
    from fsspec import AbstractFileSystem

PROVEN_SCHEMES = ("file", "local", "memory", "s3", "s3a")
_PROBED_SCHEMES = ("s3", "s3a")


class LeaseStorageUnsupportedError(ConfigurationError):
    """``high-availability.storageDir`` is on a store where the lease's fencing is not proven."""

    def __init__(self, uri: str, scheme: str, reason: str) -> None:
        super().__init__(uri, scheme, reason)
        self.uri = uri
        self.scheme = scheme
        self.reason = reason

    def __str__(self) -> str:
        return (f"high-availability.storageDir {self.uri!r}: the {self.scheme}:// store cannot "
                f"hold the HA lease: {self.reason}. The lease's fencing needs an atomic "
                f"create-only write; proven on {', '.join(PROVEN_SCHEMES)} "
                "(docs/reliability.md, 'JobManager high availability')")


def scheme_of(fs: AbstractFileSystem) -> str:
    protocol = fs.protocol
    return str(protocol[0] if isinstance(protocol, (tuple, list)) else protocol)


def check_scheme(uri: str, fs: AbstractFileSystem) -> None:
    """Refuse a store whose create-only write is not known to be atomic."""
    protocols = fs.protocol if isinstance(fs.protocol, (tuple, list)) else (fs.protocol,)
    if not any(p in PROVEN_SCHEMES for p in protocols):
        raise LeaseStorageUnsupportedError(
            uri, scheme_of(fs), "its client's create-only write is not known to be atomic, so "
            "two drivers could both take one fencing token")


def verify_exclusive_create(uri: str, fs: AbstractFileSystem, directory: str) -> None:
    """On stores reached over a protocol whose servers differ (S3-compatible ones), show that
    a second create of one name fails; refuse the store otherwise."""
    protocols = fs.protocol if isinstance(fs.protocol, (tuple, list)) else (fs.protocol,)
    if not any(p in _PROBED_SCHEMES for p in protocols):
        return
    probe = f"{directory.rstrip('/')}/.probe-{uuid.uuid4().hex}"
    try:
        _create(fs, probe)
        try:
            _create(fs, probe)
        except FileExistsError:
            return
        raise LeaseStorageUnsupportedError(
            uri, scheme_of(fs), "the server overwrote an object written with If-None-Match: *"
            " (it ignores create-only preconditions)")
    except (ValueError, NotImplementedError) as exc:
        raise LeaseStorageUnsupportedError(
            uri, scheme_of(fs), f"its fsspec client has no create-only write mode 'xb' ({exc})"
        ) from exc
    finally:
        try:
            fs.rm_file(probe)
        except OSError:
            pass


def _create(fs: AbstractFileSystem, path: str) -> None:
    with fs.open(path, "xb") as handle:
        handle.write(b"probe")
