"""The RPC plane with security.ssl.internal.enabled: calls and pushes over mutual TLS, a
client without the job's certificate refused with a typed error, and nothing of it kept."""

from __future__ import annotations

import socket
import ssl
import threading
from collections.abc import Iterator
from dataclasses import dataclass

import psutil
import pytest

from flintlock.common.config import Configuration
from flintlock.runtime.auth import CONTROL_PLANE, AuthenticationError, AuthFailure
from flintlock.runtime.rpc import MessageDispatcher, RpcClient, RpcServer
from flintlock.runtime.tls.accepting import connect_secured
from flintlock.runtime.tls.certificates import InternalTls, JobSecret, new_internal_tls
from flintlock.runtime.tls.contexts import (
    TlsConfigurationError,
    TlsHandshakeError,
    TlsRole,
    internal_context,
)
from flintlock.testing.waiting import wait_until

MATERIAL = new_internal_tls()
SECRET = JobSecret(b"k" * 32, MATERIAL)


@dataclass(frozen=True)
class Echo:
    payload: bytes




@pytest.fixture
def server() -> Iterator[RpcServer]:
    dispatcher = MessageDispatcher().register(Echo, lambda conn, msg: msg)
    with RpcServer(dispatcher, SECRET, handshake_timeout_s=2.0) as rpc:
        RpcClient.connect(*rpc.address, SECRET).close()  # the acceptor's selector is open
        wait_until(lambda: rpc.connections() == [])
        yield rpc


def _dial(server: RpcServer, context: ssl.SSLContext | None, timeout_s: float = 5.0) -> None:
    sock = socket.create_connection(server.address, timeout=5)
    try:
        connect_secured(sock, SECRET, CONTROL_PLANE, context, timeout_s)
    finally:
        sock.close()


def _nothing_kept(server: RpcServer, fds_before: int, threads_before: int) -> None:
    assert server.connections() == []
    wait_until(lambda: server._admission.pending == 0)
    wait_until(lambda: psutil.Process().num_fds() <= fds_before)
    assert threading.active_count() <= threads_before


def test_calls_and_large_messages_go_both_ways_over_tls(server: RpcServer) -> None:
    pushed: list[Echo] = []
    client_side = MessageDispatcher().register(Echo, lambda conn, msg: pushed.append(msg) or msg)
    connection = RpcClient.connect(*server.address, SECRET, client_side)
    try:
        big = bytes(range(256)) * 20_000  # 5 MB: hundreds of TLS records
        assert connection.call(Echo(big), 10.0) == Echo(big)
        callers = [threading.Thread(target=lambda i=i: connection.call(Echo(b"%d" % i), 10.0))
                   for i in range(8)]
        for caller in callers:
            caller.start()
        wait_until(lambda: len(server.connections()) == 1)
        [accepted] = server.connections()
        assert accepted.call(Echo(b"pushed"), 10.0) == Echo(b"pushed")
        for caller in callers:
            caller.join(10)
        assert pushed == [Echo(b"pushed")]
    finally:
        connection.close()


def test_a_client_without_a_certificate_is_refused(server: RpcServer) -> None:
    fds_before, threads_before = psutil.Process().num_fds(), threading.active_count()
    bare = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    bare.check_hostname = False
    bare.load_verify_locations(cadata=MATERIAL.ca_cert_pem.decode())
    with pytest.raises(TlsHandshakeError) as refused:
        _dial(server, bare)
    assert refused.value.reason is AuthFailure.REJECTED_BY_PEER
    _nothing_kept(server, fds_before, threads_before)


def test_a_certificate_from_another_ca_is_refused(server: RpcServer) -> None:
    stranger = new_internal_tls()
    forged = InternalTls(MATERIAL.ca_cert_pem, stranger.cert_pem, stranger.key_pem)
    fds_before, threads_before = psutil.Process().num_fds(), threading.active_count()
    with pytest.raises(TlsHandshakeError) as refused:
        _dial(server, internal_context(forged, TlsRole.CLIENT))
    assert refused.value.reason is AuthFailure.REJECTED_BY_PEER
    _nothing_kept(server, fds_before, threads_before)


def test_a_task_manager_of_another_job_is_refused(server: RpcServer) -> None:
    other_job = JobSecret(b"k" * 32, new_internal_tls())  # even with the same secret bytes
    with pytest.raises(TlsHandshakeError) as refused:
        RpcClient.connect(*server.address, other_job, timeout_s=5.0)
    assert refused.value.reason is AuthFailure.CERTIFICATE_REJECTED
    wait_until(lambda: server._admission.pending == 0)
    assert server.connections() == []


def test_a_plain_client_is_closed_at_the_deadline_and_holds_no_thread(
    server: RpcServer,
) -> None:
    fds_before, threads_before = psutil.Process().num_fds(), threading.active_count()
    with pytest.raises(AuthenticationError) as refused:
        _dial(server, None, timeout_s=4.0)
    assert refused.value.reason in (AuthFailure.TIMEOUT, AuthFailure.PEER_CLOSED)
    _nothing_kept(server, fds_before, threads_before)


def test_from_config_refuses_the_option_without_the_material() -> None:
    config = Configuration()
    config.set_string("security.ssl.internal.enabled", "true")
    with pytest.raises(TlsConfigurationError, match=r"security\.ssl\.internal\.enabled"):
        RpcServer.from_config(config, MessageDispatcher(), b"k" * 32)
