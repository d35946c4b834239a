"""A data or RPC connection refused by a full cap of unauthenticated connections is told the
endpoint is busy (issue 30), as a REST client is (``test_rest_busy_reply``): the server sends
the handshake's BUSY message in place of a challenge, and the client's handshake raises
``AuthenticationError`` with ``AuthFailure.BUSY``, which reads "the endpoint is busy", not
"authentication failed" or a lost connection. Without the reply (the server closing at once)
the client saw the connection closed by its peer."""

from __future__ import annotations

import pytest

from flintlock.common.config import Configuration
from flintlock.runtime.auth import (
    CHALLENGE_SIZE,
    CONTROL_PLANE,
    AuthenticationError,
    AuthFailure,
    ClientHandshake,
    busy_reply,
)
from flintlock.runtime.network.buffer import NetworkBufferPool
from flintlock.runtime.network.partition import ResultPartitionManager
from flintlock.runtime.network.transport import TcpTransport
from flintlock.runtime.rpc import RpcServer
from tests.bad_clients import close_all, open_silent
from tests.conformance.conftest import SECRET as DATA_SECRET
from tests.conformance.conftest import SEGMENT, raw_connection
from tests.unit.rpc_support import SECRET, Recorder, connect


def _is_busy(error: AuthenticationError, limit: int) -> None:
    assert error.reason is AuthFailure.BUSY
    text = str(error)
    assert text.startswith("the endpoint is busy") and f"{limit} connections" in text
    assert "authentication failed" not in text


def test_the_client_handshake_reads_a_busy_reply():
    reply = busy_reply(128)
    assert len(reply) == CHALLENGE_SIZE
    with pytest.raises(AuthenticationError) as refused:
        ClientHandshake(SECRET, CONTROL_PLANE).receive_challenge(reply)
    _is_busy(refused.value, 128)


def _held(address, count):
    """``count`` silent connections, each surely admitted (it got its challenge)."""
    silent = open_silent(address, count)
    for sock in silent:
        assert len(sock.recv(CHALLENGE_SIZE)) > 0
    return silent


def test_an_rpc_client_over_the_cap_is_told_the_endpoint_is_busy():
    with RpcServer(Recorder().dispatcher, SECRET, handshake_timeout_s=3600,
                   max_pending_handshakes=2) as server:
        silent = _held(server.address, 2)
        try:
            with pytest.raises(AuthenticationError) as refused:
                connect(server)
            _is_busy(refused.value, 2)
        finally:
            close_all(silent)


def test_a_data_connection_over_the_cap_is_told_the_endpoint_is_busy():
    pool = NetworkBufferPool(16, SEGMENT)
    transport = TcpTransport(Configuration(), DATA_SECRET, ResultPartitionManager(), pool,
                             "capped", max_pending_handshakes=2).start()
    try:
        silent = _held(transport.address, 2)
        try:
            with pytest.raises(AuthenticationError) as refused:
                raw_connection(transport.address)
            _is_busy(refused.value, 2)
        finally:
            close_all(silent)
    finally:
        transport.close()
