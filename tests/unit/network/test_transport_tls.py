"""The data plane with security.ssl.internal.enabled: who gets in, what a refused client is
told, and that the server keeps nothing of it. (That records flow over TLS exactly as over
plain TCP is the conformance suite's ``tls`` cluster.)"""

from __future__ import annotations

import socket
import ssl
import threading
from collections.abc import Iterator

import psutil
import pytest

from flintlock.common.config import Configuration
from flintlock.runtime.auth import DATA_PLANE, AuthenticationError, AuthFailure
from flintlock.runtime.network.buffer import NetworkBufferPool
from flintlock.runtime.network.partition import ResultPartitionManager
from flintlock.runtime.network.transport import TcpTransport
from flintlock.runtime.tls.accepting import connect_secured
from flintlock.runtime.tls.certificates import InternalTls, JobSecret, new_internal_tls
from flintlock.runtime.tls.contexts import (
    TlsConfigurationError,
    TlsHandshakeError,
    TlsRole,
    internal_context,
)
from flintlock.testing.exchange import write
from flintlock.testing.waiting import wait_until
from tests.conformance.conftest import SECRET, Cluster


@pytest.fixture
def tls() -> Iterator[Cluster]:
    cluster = Cluster("tls")
    yield cluster
    cluster.close()


def _refused_and_released(transport: TcpTransport, fds_before: int, refused: int = 1) -> None:
    """The server closed the refused connection and holds no place, socket or thread for it."""
    wait_until(lambda: transport.rejected_connections == refused)
    wait_until(lambda: transport._admission.pending == 0)
    assert [c for c in transport.statistics().connections if c.serving] == []
    wait_until(lambda: psutil.Process().num_fds() <= fds_before)


def _dial(transport: TcpTransport, context: ssl.SSLContext | None,
          secret: bytes = SECRET, timeout_s: float = 10.0) -> None:
    sock = socket.create_connection(transport.address, timeout=10)
    try:
        connect_secured(sock, secret, DATA_PLANE, context, timeout_s)
    finally:
        sock.close()


def test_a_job_member_gets_records_over_tls(tls: Cluster) -> None:
    producer, consumer = tls.node(), tls.node()
    partition = producer.partition("sealed", 1)
    gate = consumer.gate(producer, partition.partition_id, [0])
    gate.request_partitions()
    write(partition, 0, b"over tls")
    item = gate.get_next(timeout_s=10)
    assert item is not None and bytes(item[1].view()) == b"over tls"
    item[1].recycle()
    gate.close()


def test_a_client_without_a_certificate_is_refused(tls: Cluster) -> None:
    producer = tls.node()
    assert tls.tls is not None
    fds_before = psutil.Process().num_fds()
    bare = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)  # trusts the job's CA, presents nothing
    bare.check_hostname = False
    bare.load_verify_locations(cadata=tls.tls.ca_cert_pem.decode())
    with pytest.raises(TlsHandshakeError) as refused:
        _dial(producer.transport, bare)
    assert refused.value.reason is AuthFailure.REJECTED_BY_PEER
    _refused_and_released(producer.transport, fds_before)


def test_a_certificate_from_another_ca_is_refused(tls: Cluster) -> None:
    producer = tls.node()
    assert tls.tls is not None
    stranger = new_internal_tls()  # knows the job's CA certificate, holds its own key
    forged = InternalTls(tls.tls.ca_cert_pem, stranger.cert_pem, stranger.key_pem)
    fds_before = psutil.Process().num_fds()
    with pytest.raises(TlsHandshakeError) as refused:
        _dial(producer.transport, internal_context(forged, TlsRole.CLIENT))
    assert refused.value.reason is AuthFailure.REJECTED_BY_PEER
    _refused_and_released(producer.transport, fds_before)


def test_a_task_manager_of_another_job_refuses_the_server_first(tls: Cluster) -> None:
    producer = tls.node()
    other_job = Cluster("tls")
    try:
        intruder = other_job.node()
        with pytest.raises(TlsHandshakeError) as refused:
            intruder.transport.client_for(producer.transport.address)
        assert refused.value.reason is AuthFailure.CERTIFICATE_REJECTED
        wait_until(lambda: producer.transport.rejected_connections == 1)
    finally:
        other_job.close()


def test_the_job_certificate_with_a_wrong_secret_is_still_refused(tls: Cluster) -> None:
    producer = tls.node()
    assert tls.tls is not None
    fds_before = psutil.Process().num_fds()
    with pytest.raises(AuthenticationError) as refused:
        _dial(producer.transport, internal_context(tls.tls, TlsRole.CLIENT),
              secret=b"another-secret-0123456789abcdefg")
    assert refused.value.reason is AuthFailure.WRONG_SECRET
    _refused_and_released(producer.transport, fds_before)


def test_a_plain_tcp_client_times_out_and_is_closed_at_the_deadline() -> None:
    cluster = Cluster("tls")
    try:
        producer = cluster.node(**{"flintlock.network.auth-timeout": "300 ms"})
        fds_before = psutil.Process().num_fds()
        with pytest.raises(AuthenticationError) as refused:
            _dial(producer.transport, None, timeout_s=2.0)
        assert refused.value.reason in (AuthFailure.TIMEOUT, AuthFailure.PEER_CLOSED)
        _refused_and_released(producer.transport, fds_before)
    finally:
        cluster.close()


def test_a_tls_client_of_a_plain_server_is_told_it_is_not_tls() -> None:
    plain, sealed = Cluster("tcp"), Cluster("tls")
    try:
        server = plain.node()
        client = sealed.node()
        with pytest.raises(TlsHandshakeError) as refused:
            client.transport.client_for(server.transport.address)
        assert refused.value.reason is AuthFailure.TLS_FAILED
    finally:
        plain.close()
        sealed.close()


def test_a_silent_tls_client_holds_no_thread_until_the_deadline() -> None:
    cluster = Cluster("tls")
    try:
        producer = cluster.node(**{"flintlock.network.auth-timeout": "300 ms"})
        threads_before = threading.active_count()
        silent = [socket.create_connection(producer.transport.address) for _ in range(20)]
        assert threading.active_count() == threads_before
        wait_until(lambda: producer.transport.rejected_connections == 20)
        for sock in silent:
            sock.settimeout(5)
            assert sock.recv(1) == b""  # closed by the server at the deadline
            sock.close()
    finally:
        cluster.close()


def test_enabled_without_the_jobs_certificate_is_a_typed_error() -> None:
    config = Configuration()
    config.set_string("security.ssl.internal.enabled", "true")
    with pytest.raises(TlsConfigurationError, match=r"security\.ssl\.internal\.enabled"):
        TcpTransport(config, SECRET, ResultPartitionManager(), NetworkBufferPool(8, 4096))


def test_a_secret_with_material_is_enough_without_the_option() -> None:
    secret = JobSecret(SECRET, new_internal_tls())
    transport = TcpTransport(Configuration(), secret, ResultPartitionManager(),
                             NetworkBufferPool(8, 4096))
    assert transport._tls_server is not None and transport._tls_client is not None
    transport.close()
