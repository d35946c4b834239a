"""Leadership of a cluster id: a lease with fencing tokens on a filesystem.

Design note. At most one driver may run a job of a cluster id. Drivers compete through lease
files under ``<storageDir>/<cluster-id>/leases/``, one per leadership term, named by its
fencing token: ``lease-<token>`` holds the owner, the token and when the lease expires
(wall-clock epoch ms). Rules:

* Acquire: read the newest lease; while another owner's lease is unexpired, wait (up to
  ``lease-wait-timeout``); then create ``lease-<token+1>`` with an *exclusive* create. Of two
  contenders only one can create it; the other retries and finds it held. Tokens only grow:
  a lease is never deleted to release it, only marked expired, so a token is never reused.
* Renew: every third of ``lease-duration`` the holder confirms it is still the leader and
  rewrites its lease with a new expiry.
* Confirm (``confirm``), before every write that must not come from a stale leader (the job
  record, checkpoint pointers, and so before checkpoint notifications let sinks commit):
  the holder is the leader only while its own lease is unexpired by its own clock and no
  newer token exists. A successor takes over only after the lease expired by *its* clock, so
  with clock skew below the lease duration a driver that confirmed is still the only leader.
  A driver that was frozen (GC, SIGSTOP, a paused VM) past its lease finds a newer token or its
  own lease expired, and stops: ``LeadershipLostError``.

The exclusive create is the one primitive this needs, plus reading one file by name after
it was written; which stores have both is ``lease_storage``'s concern (local and network
filesystems, fsspec's memory filesystem, S3 through s3fs's ``If-None-Match``; others are
refused). Listings only say where to start looking: the newest token is found by reading
``lease-<n+1>`` by name until one is missing (``_newest``), and ``confirm`` reads the name
after its own token, so a listing that lags behind (an eventually consistent one, s3fs's
listing cache) cannot hide a newer leader. No rename and no modification time is used.

Thread ownership: ``acquire`` on the thread building the JobManager; then the ``LeaseKeeper``
thread renews, and the JobManager thread calls ``confirm``; both only read the lease's
immutable token and the files, and ``_expires_ms`` is a float swapped under the GIL.
"""

from __future__ import annotations

import json
import logging
import threading
import time
import uuid
from collections.abc import Callable

from flintlock.common.clock import Clock
from flintlock.common.errors import FlintlockError
from flintlock.runtime.checkpoint.storage import join, resolve, write_file

log = logging.getLogger(__name__)
_PREFIX = "lease-"
_KEEP_OLD = 2


class LeadershipUnavailableError(FlintlockError):
    """Another live driver holds the cluster id's leadership."""

    def __init__(self, cluster_id: str, holder: str, waited_ms: int) -> None:
        super().__init__(cluster_id, holder, waited_ms)
        self.cluster_id = cluster_id
        self.holder = holder
        self.waited_ms = waited_ms

    def __str__(self) -> str:
        return (f"another driver ({self.holder}) runs the job of high-availability.cluster-id "
                f"{self.cluster_id!r}; waited {self.waited_ms} ms for its lease "
                "(high-availability.filesystem.lease-wait-timeout)")


class LeadershipLostError(FlintlockError):
    """This driver is no longer the leader of its cluster id: it must stop running the job."""

    def __init__(self, cluster_id: str, detail: str) -> None:
        super().__init__(cluster_id, detail)
        self.cluster_id = cluster_id
        self.detail = detail

    def __str__(self) -> str:
        return f"lost the leadership of cluster id {self.cluster_id!r}: {self.detail}"


class FileLease:
    def __init__(self, root: str, cluster_id: str, duration_ms: int, clock: Clock,
                 owner: str | None = None) -> None:
        self.directory = join(root, "leases")
        self.cluster_id = cluster_id
        self.duration_ms = duration_ms
        self.owner = owner or f"{uuid.uuid4().hex[:12]}"
        self._clock = clock
        self.token = 0
        self._expires_ms = 0.0

    # -- the files -----------------------------------------------------------------------

    def _tokens(self) -> list[int]:
        fs, path = resolve(self.directory)
        fs.invalidate_cache(path)
        if not fs.isdir(path):
            return []
        names = [str(p).rstrip("/").rsplit("/", 1)[-1] for p in fs.ls(path, detail=False)]
        return sorted(int(n[len(_PREFIX):]) for n in names
                      if n.startswith(_PREFIX) and n[len(_PREFIX):].isdigit())

    def _uri(self, token: int) -> str:
        return join(self.directory, f"{_PREFIX}{token:010d}")

    def _newest(self) -> int:
        """The newest token: where the listing ends, then the next names read one by one."""
        tokens = self._tokens()
        newest = tokens[-1] if tokens else 0
        while self._exists(newest + 1):
            newest += 1
        return newest

    def _exists(self, token: int) -> bool:
        fs, path = resolve(self._uri(token))
        try:
            fs.cat_file(path)
        except FileNotFoundError:
            return False
        return True

    def _read(self, token: int) -> dict[str, object]:
        fs, path = resolve(self._uri(token))
        try:
            value = json.loads(fs.cat_file(path))
        except (FileNotFoundError, ValueError):
            return {}
        return value if isinstance(value, dict) else {}

    def _body(self, expires_ms: float, token: int | None = None) -> bytes:
        return json.dumps({"owner": self.owner, "token": self.token if token is None else token,
                           "expires_ms": expires_ms}).encode()

    # -- the protocol --------------------------------------------------------------------

    def acquire(self, wait_ms: int, sleep: Callable[[float], None] = time.sleep) -> int:
        """Become the leader (waiting up to ``wait_ms`` for another's lease to expire);
        returns the fencing token."""
        started = self._clock.now_ms()
        while True:
            newest = self._newest()
            held = self._read(newest) if newest else {}
            expires = _as_float(held.get("expires_ms"))
            now = self._clock.wall_ms()
            if held and held.get("owner") != self.owner and expires > now:
                waited = self._clock.now_ms() - started
                if waited >= wait_ms:
                    raise LeadershipUnavailableError(self.cluster_id, str(held.get("owner")),
                                                     int(waited))
                sleep(min(0.1, (expires - now) / 1000.0, max(0.0, (wait_ms - waited) / 1000)))
                continue
            if self._create(newest + 1):
                self._prune(newest)
                log.info("leader of cluster id %r with fencing token %d",
                         self.cluster_id, self.token)
                return self.token

    def _create(self, token: int) -> bool:
        fs, path = resolve(self._uri(token))
        fs.makedirs(path.rsplit("/", 1)[0], exist_ok=True)
        expires = self._clock.wall_ms() + self.duration_ms
        try:
            # An object store checks the precondition when the upload completes, at close.
            with fs.open(path, "xb") as handle:
                handle.write(self._body(expires, token))
        except FileExistsError:
            return False
        self.token = token
        self._expires_ms = expires
        return True

    def _prune(self, before: int) -> None:
        for old in [t for t in self._tokens() if t <= before][:-_KEEP_OLD]:
            fs, path = resolve(self._uri(old))
            try:
                fs.rm(path)
            except (FileNotFoundError, OSError):
                pass

    def confirm(self) -> None:
        """Raise ``LeadershipLostError`` unless this driver is surely still the leader."""
        if not self.token:
            raise LeadershipLostError(self.cluster_id, "never acquired")
        now = self._clock.wall_ms()
        if now >= self._expires_ms:
            late = now - self._expires_ms
            raise LeadershipLostError(self.cluster_id, f"the lease of token {self.token} "
                                      f"expired {late:.0f} ms ago without renewal")
        tokens = self._tokens()
        newer = tokens[-1] if tokens and tokens[-1] > self.token else (
            self.token + 1 if self._exists(self.token + 1) else 0)
        if newer:
            raise LeadershipLostError(
                self.cluster_id, f"fenced: token {newer} is newer than ours ({self.token})")

    def renew(self) -> None:
        self.confirm()
        expires = self._clock.wall_ms() + self.duration_ms
        write_file(self._uri(self.token), self._body(expires))
        self._expires_ms = expires

    def release(self) -> None:
        """Give the leadership up (the lease is marked expired, its token stays used)."""
        if not self.token:
            return
        try:
            self.confirm()
            write_file(self._uri(self.token), self._body(0))
        except (LeadershipLostError, OSError) as exc:
            log.info("not releasing lease %d: %s", self.token, exc)
        self._expires_ms = 0.0


class LeaseKeeper:
    """Renews a lease every third of its duration on a thread of its own; calls ``on_lost``
    once when it cannot (fenced, expired, or storage failing until the lease ran out)."""

    def __init__(self, lease: FileLease, on_lost: Callable[[LeadershipLostError], None]) -> None:
        self._lease = lease
        self._on_lost = on_lost
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True,
                                        name=f"flintlock-lease-{lease.cluster_id}")

    def start(self) -> LeaseKeeper:
        self._thread.start()
        return self

    def _run(self) -> None:
        while not self._stop.wait(self._lease.duration_ms / 3000.0):
            try:
                self._lease.renew()
            except LeadershipLostError as exc:
                self._on_lost(exc)
                return
            except OSError as exc:
                log.warning("could not renew lease %d: %s", self._lease.token, exc)

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive() and threading.current_thread() is not self._thread:
            self._thread.join(5.0)


def _as_float(value: object) -> float:
    return float(value) if isinstance(value, (int, float)) else 0.0
