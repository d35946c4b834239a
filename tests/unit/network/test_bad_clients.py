"""The data plane against peers that misbehave (issue 14): a frame's announced length is not
allocated before its bytes arrive, on either side of a connection; an authenticated peer that
falls silent is closed as a lost connection while a healthy idle one stays open; excess
unauthenticated connections are refused at once."""

from __future__ import annotations

import logging
import pickle
import socket
import threading
import tracemalloc
from collections.abc import Iterator

import pytest

from flintlock.common.config import Configuration
from flintlock.common.ids import IntermediateDataSetId, ResultPartitionId, SubtaskIndex
from flintlock.runtime.auth import DATA_PLANE, authenticate_server
from flintlock.runtime.network.buffer import DataType, NetworkBufferPool
from flintlock.runtime.network.frame_decoder import FrameDecoder
from flintlock.runtime.network.input_channel import InputChannelError
from flintlock.runtime.network.partition import ResultPartitionManager
from flintlock.runtime.network.protocol import BUFFER_FIXED as _BUFFER_FIXED
from flintlock.runtime.network.protocol import (
    HEADER,
    HEADER_SIZE,
    MAGIC,
    ConnectionLostError,
    ErrorKind,
    ErrorResponse,
    MessageType,
    PeerSilentError,
    encode,
)
from flintlock.runtime.network.transport import TcpTransport
from flintlock.testing.exchange import write
from flintlock.testing.waiting import wait_until
from tests.bad_clients import WAIT_S, close_all, closed_by_peer, open_silent
from tests.conformance.conftest import (
    SECRET,
    SEGMENT,
    Cluster,
    raw_connection,
    request_frame,
)

ANNOUNCED = 16 * 1024 * 1024
HELD_AT_MOST = 1024 * 1024  # what "holds no 16 MiB" means here: less than 1 MiB traced
PID = ResultPartitionId(IntermediateDataSetId("p"), SubtaskIndex(0))


@pytest.fixture
def tcp() -> Iterator[Cluster]:
    cluster = Cluster("tcp")
    yield cluster
    cluster.close()


def _announcing(kind: MessageType, payload: bytes = b"") -> bytes:
    """The header of a frame announcing ANNOUNCED bytes, and its first ``payload`` bytes."""
    return HEADER.pack(MAGIC, kind, ANNOUNCED) + payload


def _buffer_fixed(receiver: int, data_type: DataType) -> bytes:
    return _BUFFER_FIXED.pack(receiver, 0, 0, data_type)


class _Traced:
    """Bytes allocated (traced by tracemalloc) since it was entered, at their peak."""

    def __enter__(self) -> _Traced:
        tracemalloc.start()
        tracemalloc.reset_peak()
        self._base = tracemalloc.get_traced_memory()[0]
        return self

    def peak(self) -> int:
        return tracemalloc.get_traced_memory()[1] - self._base

    def __exit__(self, *exc_info: object) -> None:
        tracemalloc.stop()


# -- the decoder ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "frame",
    [
        _announcing(MessageType.ERROR_RESPONSE, b"0123456789"),
        _announcing(MessageType.PARTITION_REQUEST, b"0123456789"),
        _announcing(MessageType.BUFFER_RESPONSE,
                    _buffer_fixed(7, DataType.EVENT_BUFFER) + b"0123456789"),
    ],
    ids=["control body", "request body", "buffer payload"],
)
def test_a_16_mib_announcement_with_10_bytes_sent_holds_no_16_mib(frame: bytes) -> None:
    decoder = FrameDecoder(ANNOUNCED)
    with _Traced() as traced:
        assert decoder.feed(frame) == []
        assert traced.peak() < HELD_AT_MOST
    with pytest.raises(ConnectionLostError):
        decoder.close("peer")


def test_a_large_body_still_decodes_as_it_grows() -> None:
    text = "x" * (3 * 1024 * 1024)
    wire = b"".join(bytes(c) for c in encode(ErrorResponse(None, ErrorKind.OTHER, text)))
    decoder = FrameDecoder(ANNOUNCED)
    messages = []
    for start in range(0, len(wire), 7919):
        messages += decoder.feed(wire[start:start + 7919])
    assert [m.text for m in messages] == [text]  # type: ignore[union-attr]


# -- over TCP -------------------------------------------------------------------------------


def test_a_data_server_holds_no_16_mib_for_an_announcement(tcp: Cluster) -> None:
    producer = tcp.node()
    with _Traced() as traced:
        client = raw_connection(producer.transport.address)
        client.sendall(_announcing(MessageType.ERROR_RESPONSE, b"0123456789"))
        wait_until(lambda: _received(producer) >= HEADER_SIZE + 10)
        assert traced.peak() < HELD_AT_MOST
    client.close()


def _received(node) -> int:
    return sum(c.bytes_received for c in node.transport.statistics().connections if c.serving)


class _FakeProducer:
    """A data server run by hand: accepts one consumer on a thread, authenticates it and
    reads its partition request (``accepted()``); then the test writes what it likes."""

    def __init__(self) -> None:
        self.listener = socket.create_server(("127.0.0.1", 0))
        self._accepted: list[tuple[socket.socket, int]] = []
        self._thread = threading.Thread(target=self._accept, name="test-fake-producer")
        self._thread.start()

    @property
    def transport(self) -> _FakeProducer:  # what Node.gate needs of a producer
        return self

    @property
    def address(self) -> tuple[str, int]:
        host, port = self.listener.getsockname()[:2]
        return host, port

    def _accept(self) -> None:
        sock, _ = self.listener.accept()
        sock.settimeout(WAIT_S)
        authenticate_server(sock, SECRET, DATA_PLANE, WAIT_S)
        _, _, length = HEADER.unpack(_recv_exactly(sock, HEADER_SIZE))
        body = _recv_exactly(sock, length)
        self._accepted.append((sock, int.from_bytes(body[:8], "big")))  # the receiver id

    def accepted(self) -> tuple[socket.socket, int]:
        """The consumer's socket and the receiver id of its request."""
        self._thread.join(WAIT_S)
        (accepted,) = self._accepted
        return accepted

    def close(self) -> None:
        self.listener.close()
        for sock, _ in self._accepted:
            sock.close()


def _recv_exactly(sock: socket.socket, n: int) -> bytes:
    data = b""
    while len(data) < n:
        chunk = sock.recv(n - len(data))
        assert chunk, "peer closed"
        data += chunk
    return data


def test_a_consumer_holds_no_16_mib_for_an_announced_event(tcp: Cluster) -> None:
    consumer, producer = tcp.node(), _FakeProducer()
    gate = consumer.gate(producer, PID, [0])  # type: ignore[arg-type]
    gate.request_partitions()
    sock, receiver = producer.accepted()
    with _Traced() as traced:
        sock.sendall(_announcing(MessageType.BUFFER_RESPONSE,
                                 _buffer_fixed(receiver, DataType.EVENT_BUFFER)
                                 + b"0123456789"))
        wait_until(lambda: _received_by_clients(consumer) >= HEADER_SIZE + 31)
        assert traced.peak() < HELD_AT_MOST
    producer.close()
    with pytest.raises(InputChannelError):
        gate.get_next(timeout_s=WAIT_S)
    gate.close()


def _received_by_clients(node) -> int:
    return sum(c.bytes_received for c in node.transport.statistics().connections
               if not c.serving)


# -- idle connections -----------------------------------------------------------------------


def test_a_silent_authenticated_peer_is_closed_as_lost(tcp: Cluster) -> None:
    producer = tcp.node(**{"heartbeat.timeout": "300 ms"})
    partition = producer.partition("p", 1)
    silent = raw_connection(producer.transport.address)  # answers no keepalive
    silent.sendall(request_frame(partition.partition_id, 0, 7, credit=1))
    assert closed_by_peer(silent)
    silent.close()
    wait_until(lambda: not [c for c in producer.transport.statistics().connections
                            if c.serving])


def test_a_consumer_whose_producer_falls_silent_fails_its_channels(tcp: Cluster) -> None:
    consumer, producer = tcp.node(**{"heartbeat.timeout": "300 ms"}), _FakeProducer()
    gate = consumer.gate(producer, PID, [0])  # type: ignore[arg-type]
    gate.request_partitions()
    producer.accepted()  # then it says nothing and answers nothing
    try:
        with pytest.raises(InputChannelError) as info:
            gate.get_next(timeout_s=WAIT_S)
        assert isinstance(info.value.__cause__, PeerSilentError)
        assert isinstance(info.value.__cause__, ConnectionLostError)  # a lost connection
        assert "heartbeat.timeout" in str(info.value.__cause__)
    finally:
        producer.close()
        gate.close()


def test_a_healthy_idle_connection_stays_open(tcp: Cluster) -> None:
    options = {"heartbeat.timeout": "1 s"}
    producer, consumer = tcp.node(**options), tcp.node(**options)
    partition = producer.partition("p", 1)
    gate = consumer.gate(producer, partition.partition_id, [0])
    gate.request_partitions()
    wait_until(lambda: _keepalives(consumer) >= 6)  # two idle timeouts without data
    write(partition, 0, b"late")
    item = gate.get_next(timeout_s=WAIT_S)
    assert item is not None and bytes(item[1].view()) == b"late"
    item[1].recycle()
    gate.close()


def _keepalives(node) -> int:
    return sum(c.keepalives_received for c in node.transport.statistics().connections)


# -- unauthenticated connections ------------------------------------------------------------


def test_connections_above_the_cap_are_closed_at_once_and_logged_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    pool = NetworkBufferPool(16, SEGMENT)
    transport = TcpTransport(Configuration(), SECRET, ResultPartitionManager(), pool, "capped",
                             max_pending_handshakes=4).start()
    before = threading.active_count()
    try:
        with caplog.at_level(logging.WARNING, logger="flintlock.runtime.network.transport"):
            silent = open_silent(transport.address, 10)
            try:
                closed = [closed_by_peer(sock, timeout_s=0.5) for sock in silent]
                assert closed == [False] * 4 + [True] * 6
                assert threading.active_count() <= before
            finally:
                close_all(silent)
        refusals = [r for r in caplog.records if "unauthenticated" in r.getMessage()]
        assert len(refusals) == 1
        wait_until(lambda: _authenticates(transport.address))
    finally:
        transport.close()


def _authenticates(address: tuple[str, int]) -> bool:
    try:
        raw_connection(address).close()
    except ConnectionError:
        return False
    return True


def test_a_silent_peer_error_survives_pickling() -> None:
    error = pickle.loads(pickle.dumps(PeerSilentError("tm:1", 15.2, 15.0)))
    assert isinstance(error, PeerSilentError) and isinstance(error, ConnectionLostError)
    assert str(error) == str(PeerSilentError("tm:1", 15.2, 15.0))
    assert "heartbeat.timeout is 15 s" in str(error)
