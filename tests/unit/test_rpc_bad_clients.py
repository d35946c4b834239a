"""The RPC endpoint against clients that misbehave (issue 14): silent and trickling clients
during the handshake pin no thread and are cut at an absolute deadline, excess unauthenticated
connections are refused at once, and an authenticated connection that falls silent is closed
as lost while a healthy idle one stays open."""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator

import pytest

from flintlock.common.config import Configuration
from flintlock.runtime.auth import BUSY_MAGIC, CHALLENGE_SIZE, RESPONSE_SIZE
from flintlock.runtime.rpc import ConnectionLostError, RpcClient, RpcServer
from flintlock.testing.waiting import wait_until
from tests.bad_clients import WAIT_S, Trickler, close_all, closed_by_peer, open_silent
from tests.unit.rpc_support import SECRET, Echo, Recorder, authenticated_raw_socket, connect

THREADS_PER_SERVER = 3  # acceptor, plus reader and dispatcher of one connection in a test


@pytest.fixture
def recorder() -> Recorder:
    return Recorder()


@pytest.fixture
def patient_server(recorder: Recorder) -> Iterator[RpcServer]:
    with RpcServer(recorder.dispatcher, SECRET, handshake_timeout_s=3600) as server:
        yield server


def _challenged(sock) -> bool:
    """True if the server sent this socket a challenge, False if it refused it at once (a
    BUSY reply, or closed)."""
    received = b""
    while len(received) < CHALLENGE_SIZE:
        chunk = sock.recv(CHALLENGE_SIZE - len(received))
        if not chunk:
            return False
        received += chunk
    return not received.startswith(BUSY_MAGIC)


def test_200_silent_connections_create_a_bounded_number_of_threads(
    recorder: Recorder,
) -> None:
    before = threading.active_count()
    with RpcServer(recorder.dispatcher, SECRET, handshake_timeout_s=3600) as server:
        silent = open_silent(server.address, 200)
        try:
            for sock in silent:  # every one was accepted: challenged, or refused at once
                _challenged(sock)
            assert threading.active_count() - before <= THREADS_PER_SERVER
        finally:
            close_all(silent)
        wait_until(lambda: _can_connect(server))  # others get in once the flood is gone
    assert threading.active_count() <= before


def test_connections_above_the_cap_are_closed_at_once_and_logged_once(
    recorder: Recorder, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger="flintlock.runtime.rpc.server"), RpcServer(
        recorder.dispatcher, SECRET, handshake_timeout_s=3600, max_pending_handshakes=4
    ) as server:
        silent = open_silent(server.address, 10)
        try:
            assert [_challenged(sock) for sock in silent] == [True] * 4 + [False] * 6
        finally:
            close_all(silent)
        refusals = [r for r in caplog.records if "unauthenticated" in r.getMessage()]
        assert len(refusals) == 1 and "4" in refusals[0].getMessage()
        wait_until(lambda: _can_connect(server))  # the flood ended: a client gets in again


def _can_connect(server: RpcServer) -> bool:
    try:
        client = connect(server)
    except ConnectionError:
        return False
    client.close()
    return True


def test_a_trickling_handshake_is_cut_at_an_absolute_deadline(recorder: Recorder) -> None:
    with RpcServer(recorder.dispatcher, SECRET, handshake_timeout_s=0.5) as server:
        # each byte well within the deadline, the whole response far beyond it
        slow = Trickler(server.address, b"x" * RESPONSE_SIZE, period_s=0.1,
                        skip=CHALLENGE_SIZE)
        try:
            assert slow.closed_by_peer.wait(WAIT_S)
            assert slow.bytes_sent < RESPONSE_SIZE
        finally:
            slow.close()
    assert recorder.disconnects.empty()


def test_a_silent_authenticated_connection_is_closed_as_lost(recorder: Recorder) -> None:
    config = Configuration({"heartbeat.timeout": "300 ms"})
    server = RpcServer.from_config(config, recorder.dispatcher, SECRET)
    try:
        sock = authenticated_raw_socket(server)  # answers no keepalive, sends nothing
        cause = recorder.disconnects.get(timeout=WAIT_S)
        assert isinstance(cause, ConnectionLostError)
        assert "heartbeat.timeout" in str(cause)
        assert closed_by_peer(sock)
        sock.close()
    finally:
        server.close()


def test_a_healthy_idle_connection_stays_open(recorder: Recorder) -> None:
    with RpcServer(recorder.dispatcher, SECRET, idle_timeout_s=1.0) as server:
        host, port = server.address
        client = RpcClient.connect(host, port, SECRET, idle_timeout_s=1.0)
        try:
            # nothing but keepalives, one each third of the timeout, for two timeouts
            wait_until(lambda: client.statistics().keepalives_received >= 6)
            assert client.is_open and server.connections()
            assert client.call(Echo("still here"), WAIT_S) == "echo:still here"
        finally:
            client.close()
        # inside the block: leaving it closes the server, whose own close of the connection
        # would otherwise race the client's going away (a local close reports no cause)
        assert isinstance(recorder.disconnects.get(timeout=WAIT_S), ConnectionLostError)


def test_the_silent_flood_does_not_hold_the_close(patient_server: RpcServer) -> None:
    silent = open_silent(patient_server.address, 20)
    try:
        assert all(_challenged(sock) for sock in silent)
        patient_server.close()
        assert all(closed_by_peer(sock) for sock in silent)
    finally:
        close_all(silent)
