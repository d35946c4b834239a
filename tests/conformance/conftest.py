"""Builds TaskManager-like network nodes on either transport for the conformance suite.

Every test here takes the ``cluster`` fixture, which is parametrised over the TCP transport, the
TCP transport with mutual TLS (``security.ssl.internal.enabled``, one per-job CA per cluster)
and the in-memory one: all must pass the same tests.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import psutil
import pytest

from flintlock.common.config import Configuration
from flintlock.common.ids import ResultPartitionId
from flintlock.runtime.auth import DATA_PLANE, authenticate_client
from flintlock.runtime.network.buffer import NetworkBufferPool
from flintlock.runtime.network.gate import SingleInputGate
from flintlock.runtime.network.partition import ResultPartition, ResultPartitionManager
from flintlock.runtime.network.protocol import PartitionRequest, encode
from flintlock.runtime.network.remote_channel import RemoteInputChannel
from flintlock.runtime.network.transport import TcpTransport
from flintlock.runtime.tls.certificates import InternalTls, JobSecret, new_internal_tls
from flintlock.testing.exchange import new_partition, remote_gate
from flintlock.testing.transport import InMemoryNetwork, InMemoryTransport

SECRET = b"conformance-secret-0123456789abc"
SEGMENT = 4096


@dataclass
class Node:
    config: Configuration
    pool: NetworkBufferPool
    partitions: ResultPartitionManager
    transport: Any

    def partition(self, name: str, subpartitions: int, register: bool = True) -> ResultPartition:
        return new_partition(self.pool, subpartitions, config=self.config, name=name,
                             manager=self.partitions if register else None)

    def gate(
        self, producer: Node, partition_id: ResultPartitionId, subpartitions: list[int],
        floating: int = 4,
    ) -> SingleInputGate:
        return remote_gate(self.transport, producer.transport.address,
                           [(partition_id, sub) for sub in subpartitions], floating=floating)


@dataclass
class Cluster:
    kind: str
    network: InMemoryNetwork = field(default_factory=InMemoryNetwork)
    nodes: list[Node] = field(default_factory=list)
    tls: InternalTls | None = None  # the "tls" kind's per-job material, made on first use

    def node(self, secret: bytes = SECRET, segments: int = 256, **options: object) -> Node:
        config = Configuration()
        config.set_string("taskmanager.network.request-backoff.initial", "5 ms")
        config.set_string("taskmanager.network.request-backoff.max", "200 ms")
        for key, value in options.items():
            config.set_string(key, str(value))
        pool = NetworkBufferPool(segments, SEGMENT)
        partitions = ResultPartitionManager()
        transport: Any
        name = f"tm{len(self.nodes)}"
        if self.kind == "tls":
            self.tls = self.tls or new_internal_tls()
            config.set_string("security.ssl.internal.enabled", "true")
            secret = JobSecret(secret, self.tls)
        if self.kind in ("tcp", "tls"):
            transport = TcpTransport(config, secret, partitions, pool, name)
        else:
            transport = InMemoryTransport(self.network, config, secret, partitions, pool, name)
        node = Node(config, pool, partitions, transport.start())
        self.nodes.append(node)
        return node

    def one_channel(self, name: str) -> tuple[Node, Node, ResultPartition, SingleInputGate]:
        """Two new nodes: the producer's registered partition ``name`` of one subpartition and
        the consumer's gate of one remote channel reading it."""
        producer, consumer = self.node(), self.node()
        partition = producer.partition(name, 1)
        return producer, consumer, partition, consumer.gate(producer, partition.partition_id, [0])

    def close(self) -> None:
        for node in self.nodes:
            node.transport.close()


@pytest.fixture(params=["tcp", "tls", "memory"])
def cluster(request: pytest.FixtureRequest) -> Iterator[Cluster]:
    before = set(threading.enumerate())
    fds_before = psutil.Process().num_fds()
    cluster = Cluster(request.param)
    yield cluster
    cluster.close()
    assert psutil.Process().num_fds() <= fds_before  # every socket and wake-up pipe closed
    leaked = [t for t in threading.enumerate() if t not in before and t.is_alive()]
    leaked = [t for t in leaked if t.name.startswith("flintlock-")]
    assert leaked == []


def remote(gate: SingleInputGate, index: int) -> RemoteInputChannel:
    channel = gate.channels[index]
    assert isinstance(channel, RemoteInputChannel)
    return channel


def raw_connection(address: tuple[str, int], secret: bytes = SECRET, rcvbuf: int | None = None
                   ) -> socket.socket:
    """A hand-driven client socket: connected, optionally authenticated, blocking."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    if rcvbuf is not None:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
    sock.settimeout(10)
    sock.connect(address)
    if secret:
        authenticate_client(sock, secret, DATA_PLANE, 10)
    return sock


def request_frame(partition_id: ResultPartitionId, subpartition: int, receiver: int,
                  credit: int) -> bytes:
    return b"".join(
        bytes(c) for c in encode(PartitionRequest(partition_id, subpartition, receiver, credit))
    )
