"""The HA lease on an object store (issue 16): S3 through s3fs, against moto's S3 server on
127.0.0.1 (the test extra's ``moto[server]``), which evaluates ``If-None-Match: *`` as S3 does.

The fencing needs an atomic create-only write and reading one object by name
(``flintlock.runtime.jobmanager.lease_storage``): two drivers cannot take one token, a frozen
leader is fenced by the next token even when a listing does not show it yet, an S3-compatible
server that ignores the precondition is refused at start-up, and stores where the primitive is
not proven are refused with an error naming the scheme.
"""

from __future__ import annotations

import importlib
import threading
from collections.abc import Iterator

import boto3
import fsspec
import pytest
from fsspec.implementations.memory import MemoryFileSystem
from moto.server import ThreadedMotoServer

from flintlock.common.config import Configuration
from flintlock.common.ids import JobId
from flintlock.graph.job_graph import JobGraph
from flintlock.runtime.jobmanager.high_availability import JobHighAvailability
from flintlock.runtime.jobmanager.leadership import (
    FileLease,
    LeadershipLostError,
    LeadershipUnavailableError,
)
from flintlock.runtime.jobmanager.lease_storage import (
    LeaseStorageUnsupportedError,
    verify_exclusive_create,
)
from flintlock.testing.clock import ManualClock

BUCKET = "flintlock-ha"


@pytest.fixture(scope="module")
def s3_endpoint() -> Iterator[str]:
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    yield f"http://{host}:{port}"
    server.stop()


@pytest.fixture
def s3(s3_endpoint, monkeypatch, request) -> str:
    """A fresh bucket prefix; s3fs reaches the server through fsspec's configuration."""
    for name, value in (("AWS_ACCESS_KEY_ID", "test"), ("AWS_SECRET_ACCESS_KEY", "test"),
                        ("AWS_DEFAULT_REGION", "us-east-1")):
        monkeypatch.setenv(name, value)
    monkeypatch.setitem(fsspec.config.conf, "s3", {
        "key": "test", "secret": "test", "client_kwargs": {"endpoint_url": s3_endpoint}})
    client = boto3.client("s3", endpoint_url=s3_endpoint, region_name="us-east-1",
                          aws_access_key_id="test", aws_secret_access_key="test")
    if BUCKET not in [b["Name"] for b in client.list_buckets()["Buckets"]]:
        client.create_bucket(Bucket=BUCKET)
    return f"s3://{BUCKET}/{request.node.name}"


def _lease(root: str, clock: ManualClock, owner: str) -> FileLease:
    return FileLease(f"{root}/c1", "c1", 1000, clock, owner)


def test_of_two_drivers_racing_for_one_token_on_s3_only_one_wins(s3):
    clock = ManualClock(1_000_000)
    contenders = [_lease(s3, clock, f"d{i}") for i in range(4)]
    won = []
    barrier = threading.Barrier(len(contenders))

    def race(lease: FileLease) -> None:
        barrier.wait(10)
        if lease._create(1):
            won.append(lease.owner)

    threads = [threading.Thread(target=race, args=(lease,)) for lease in contenders]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert len(won) == 1, won
    for lease in contenders:
        if lease.owner in won:
            lease.confirm()
        else:
            with pytest.raises(LeadershipLostError, match="never acquired"):
                lease.confirm()


def test_on_s3_a_second_driver_waits_and_a_frozen_leader_is_fenced(s3):
    clock = ManualClock(1_000_000)
    first = _lease(s3, clock, "a")
    assert first.acquire(0) == 1
    with pytest.raises(LeadershipUnavailableError):
        _lease(s3, clock, "b").acquire(0)
    clock.advance(1500)  # frozen past its lease
    second = _lease(s3, clock, "b")
    assert second.acquire(0) == 2
    with pytest.raises(LeadershipLostError):
        first.confirm()
    second.renew()
    second.release()
    assert _lease(s3, clock, "c").acquire(0) == 3


def test_a_listing_that_lags_behind_hides_no_newer_token(s3, monkeypatch):
    """An eventually consistent listing (or a client's listing cache) that shows no leases:
    the next names are read one by one, so the newer token is found all the same."""
    first = _lease(s3, ManualClock(1_000_000), "a")
    first.acquire(0)
    second = _lease(s3, ManualClock(1_001_500), "b")  # sees the first lease expired
    monkeypatch.setattr(FileLease, "_tokens", lambda self: [])
    assert second.acquire(0) == 2
    with pytest.raises(LeadershipLostError, match="fenced: token 2"):
        first.confirm()  # unexpired by its own clock, and the listing shows nothing


def test_ha_on_s3_registers_the_job_and_a_second_driver_cannot_lead(s3):
    config = (Configuration().set_string("high-availability.type", "filesystem")
              .set_string("high-availability.storageDir", s3)
              .set_string("high-availability.cluster-id", "orders")
              .set_string("high-availability.filesystem.lease-wait-timeout", "0 ms"))
    graph = JobGraph(JobId("j1"), "a job", (), {})
    first = JobHighAvailability.from_config(config, ManualClock(1_000_000))
    assert first is not None
    assert first.start(graph, lambda lost: None) is graph
    assert fsspec.filesystem("s3").exists(f"{s3}/orders/job.json".removeprefix("s3://"))
    second = JobHighAvailability.from_config(config, ManualClock(1_000_000))
    assert second is not None
    with pytest.raises(LeadershipUnavailableError):
        second.start(graph, lambda lost: None)
    first.lease.release()


class _IgnoresPreconditions(MemoryFileSystem):  # type: ignore[misc]
    """An S3-compatible server that overwrites an object created with If-None-Match: *."""

    protocol = ("s3", "s3a")
    store: dict = {}
    pseudo_dirs = [""]

    def _open(self, path, mode="rb", *args, **kwargs):
        return super()._open(path, mode.replace("x", "w"), *args, **kwargs)


def test_an_s3_server_that_ignores_create_only_preconditions_is_refused():
    with pytest.raises(LeaseStorageUnsupportedError) as refused:
        verify_exclusive_create("s3://compat/ha", _IgnoresPreconditions(), "/compat/ha/leases")
    assert refused.value.scheme == "s3" and "If-None-Match" in str(refused.value)


class _Unproven(MemoryFileSystem):  # type: ignore[misc]
    protocol = "unproven"
    store: dict = {}
    pseudo_dirs = [""]


def test_a_store_whose_fencing_is_not_proven_is_refused_at_start_up(monkeypatch):
    registry = importlib.import_module("fsspec.registry")._registry
    monkeypatch.setitem(registry, "unproven", _Unproven)
    config = (Configuration().set_string("high-availability.type", "filesystem")
              .set_string("high-availability.storageDir", "unproven://bucket/ha")
              .set_string("high-availability.cluster-id", "orders"))
    with pytest.raises(LeaseStorageUnsupportedError) as refused:
        JobHighAvailability.from_config(config, ManualClock())
    assert refused.value.scheme == "unproven"
    assert "unproven://" in str(refused.value) and "create-only" in str(refused.value)
