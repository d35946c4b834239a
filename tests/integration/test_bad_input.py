"""Bad input on a data connection fails that connection only, with a typed error.

Each case runs a hostile peer on one connection while a well-behaved exchange runs on another
connection of the same TaskManager, and shows the well-behaved one still works afterwards.
Server side: a client with the wrong secret, garbage before or after authentication, an
oversized length field, a frame cut off by the client vanishing. Client side: a producer
TaskManager sending garbage, an oversized length or vanishing in the middle of a buffer.
"""

from __future__ import annotations

import socket
import struct
import threading
from collections.abc import Callable, Iterator

import pytest

from flintlock.runtime.auth import DATA_PLANE, AuthenticationError, authenticate_server
from flintlock.runtime.network.frame_decoder import FrameDecoder
from flintlock.runtime.network.input_channel import InputChannelError
from flintlock.runtime.network.protocol import (
    HEADER,
    MAGIC,
    BufferResponse,
    ConnectionLostError,
    FrameTooLargeError,
    MalformedFrameError,
    MessageType,
    PartitionRequest,
    encode_buffer_header,
)
from flintlock.testing.exchange import remote_gate, write
from flintlock.testing.waiting import wait_until
from tests.conformance.conftest import SECRET, Cluster, Node, raw_connection, request_frame

pytestmark = pytest.mark.slow


@pytest.fixture
def tcp() -> Iterator[Cluster]:
    cluster = Cluster("tcp")
    yield cluster
    cluster.close()


def healthy_exchange(producer: Node, consumer: Node, name: str) -> None:
    """A complete exchange on its own connection: three buffers, in order, then the end."""
    partition = producer.partition(name, 1)
    gate = consumer.gate(producer, partition.partition_id, [0])
    for i in range(3):
        write(partition, 0, bytes([i]) * 10)
    partition.finish()
    got = []
    while (item := gate.get_next(timeout_s=10)) is not None:
        if not item[1].is_event:
            got.append(bytes(item[1].view()))
        item[1].recycle()
    assert got == [bytes([i]) * 10 for i in range(3)]
    gate.close()


def closed_by_server(sock: socket.socket) -> bool:
    """The server closed this connection (reads drain to end of stream or a reset)."""
    try:
        while sock.recv(65536):
            pass
    except ConnectionResetError:
        pass
    sock.close()
    return True


SERVER_SIDE: dict[str, Callable[[Node], socket.socket]] = {}


def server_case(name: str) -> Callable[[Callable[[Node], socket.socket]], None]:
    def register(case: Callable[[Node], socket.socket]) -> None:
        SERVER_SIDE[name] = case
    return register


@server_case("garbage before authentication")
def _garbage_before_auth(producer: Node) -> socket.socket:
    sock = raw_connection(producer.transport.address, secret=b"")
    sock.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n" + b"\0" * 64)
    return sock


@server_case("garbage after authentication")
def _garbage_after_auth(producer: Node) -> socket.socket:
    sock = raw_connection(producer.transport.address)
    sock.sendall(b"\xde\xad\xbe\xef" * 8)
    return sock


@server_case("oversized length field")
def _oversized(producer: Node) -> socket.socket:
    sock = raw_connection(producer.transport.address)
    sock.sendall(HEADER.pack(MAGIC, MessageType.PARTITION_REQUEST, 2**31))
    return sock


@server_case("truncated frame")
def _truncated(producer: Node) -> socket.socket:
    sock = raw_connection(producer.transport.address)
    partition = producer.partition("victim", 1)
    frame = request_frame(partition.partition_id, 0, 5, credit=2)
    sock.sendall(frame[: len(frame) // 2])
    sock.shutdown(socket.SHUT_WR)  # the client vanishes in the middle of its frame
    return sock


@pytest.mark.parametrize("case", sorted(SERVER_SIDE))
def test_a_hostile_client_loses_its_connection_and_others_keep_working(
    tcp: Cluster, case: str
) -> None:
    producer, consumer = tcp.node(), tcp.node()
    healthy_exchange(producer, consumer, "before")
    hostile = SERVER_SIDE[case](producer)
    assert closed_by_server(hostile)
    if case == "garbage before authentication":
        wait_until(lambda: producer.transport.statistics().rejected_connections == 1)
    healthy_exchange(producer, consumer, "after")


def test_a_client_with_the_wrong_secret_is_refused_and_others_keep_working(
    tcp: Cluster,
) -> None:
    producer, consumer = tcp.node(), tcp.node()
    with pytest.raises(AuthenticationError):
        raw_connection(producer.transport.address, secret=b"W" * 32)
    wait_until(lambda: producer.transport.statistics().rejected_connections == 1)
    healthy_exchange(producer, consumer, "still fine")


class HostileProducer:
    """A data server that proves the secret, reads one partition request, then misbehaves."""

    def __init__(self, behave: Callable[[socket.socket, PartitionRequest], None]) -> None:
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.address = self._listener.getsockname()[:2]
        self._behave = behave
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        sock, _ = self._listener.accept()
        with sock:
            authenticate_server(sock, SECRET, DATA_PLANE, 10)
            decoder = FrameDecoder(1 << 20)
            messages: list[object] = []
            while not messages:
                messages = decoder.feed(sock.recv(4096))
            request = messages[0]
            assert isinstance(request, PartitionRequest)
            self._behave(sock, request)

    def close(self) -> None:
        self._thread.join(10)
        self._listener.close()


def _send_garbage(sock: socket.socket, request: PartitionRequest) -> None:
    sock.sendall(b"\x00not a frame at all" * 4)
    sock.recv(1)


def _send_oversized(sock: socket.socket, request: PartitionRequest) -> None:
    sock.sendall(HEADER.pack(MAGIC, MessageType.BUFFER_RESPONSE, 2**32 - 1))
    sock.recv(1)


def _vanish_mid_buffer(sock: socket.socket, request: PartitionRequest) -> None:
    header = encode_buffer_header(BufferResponse(request.receiver_id, 0, 0, 0, None, 3000))
    sock.sendall(header + b"p" * 1000)


CLIENT_SIDE = {
    "garbage": (_send_garbage, MalformedFrameError),
    "oversized length field": (_send_oversized, FrameTooLargeError),
    "vanishing mid-buffer": (_vanish_mid_buffer, ConnectionLostError),
}


@pytest.mark.parametrize("case", sorted(CLIENT_SIDE))
def test_a_hostile_producer_fails_only_the_channels_on_its_connection(
    tcp: Cluster, case: str
) -> None:
    producer, consumer = tcp.node(), tcp.node()
    behave, error = CLIENT_SIDE[case]
    hostile = HostileProducer(behave)
    partition = producer.partition("ignored", 1)
    gate = remote_gate(consumer.transport, hostile.address, [(partition.partition_id, 0)],
                       floating=4)
    with pytest.raises(InputChannelError) as info:
        gate.get_next(timeout_s=10)
    assert isinstance(info.value.__cause__, error)
    hostile.close()
    gate.close()
    wait_until(lambda: consumer.pool.statistics().exclusive_segments == 0)  # nothing leaked
    healthy_exchange(producer, consumer, "unaffected")


def test_the_decoder_limits_apply_to_the_configured_max_frame_size(tcp: Cluster) -> None:
    producer = tcp.node(**{"flintlock.network.max-frame-size": "64 kb"})
    consumer = tcp.node()
    sock = raw_connection(producer.transport.address)
    sock.sendall(struct.pack("!IBI", MAGIC, MessageType.ADD_CREDIT, 64 * 1024 + 1))
    assert closed_by_server(sock)
    healthy_exchange(producer, consumer, "fine")
