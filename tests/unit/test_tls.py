"""runtime.tls: the per-job certificates, the JobSecret that carries them, and TlsSocket's
contract (records both ways, bounded sealed output, tampering detected, deadlines)."""

from __future__ import annotations

import datetime
import pickle
import socket
import threading
import time

import cloudpickle
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import serialization

from flintlock.common.config import Configuration
from flintlock.runtime.auth import (
    DATA_PLANE,
    AuthenticationError,
    AuthFailure,
    authenticate_client,
    authenticate_server,
)
from flintlock.runtime.tls.certificates import (
    JobSecret,
    internal_tls_of,
    new_internal_tls,
    new_job_credentials,
)
from flintlock.runtime.tls.channel import SEND_BUDGET, TlsRecordError, TlsSocket
from flintlock.runtime.tls.contexts import TlsRole, internal_context, warn_if_exposed

MATERIAL = new_internal_tls()


def test_the_job_certificate_is_signed_by_the_job_ca_which_signs_nothing_else() -> None:
    ca = x509.load_pem_x509_certificate(MATERIAL.ca_cert_pem)
    cert = x509.load_pem_x509_certificate(MATERIAL.cert_pem)
    cert.verify_directly_issued_by(ca)
    assert ca.extensions.get_extension_for_class(x509.BasicConstraints).value.ca
    assert ca.extensions.get_extension_for_class(x509.BasicConstraints).value.path_length == 0
    assert not cert.extensions.get_extension_for_class(x509.BasicConstraints).value.ca
    now = datetime.datetime.now(datetime.UTC)
    assert cert.not_valid_before_utc < now - datetime.timedelta(minutes=30)
    assert cert.not_valid_after_utc > now + datetime.timedelta(days=365)


def test_the_material_holds_the_job_key_and_not_the_ca_key() -> None:
    key = serialization.load_pem_private_key(MATERIAL.key_pem, None)
    cert = x509.load_pem_x509_certificate(MATERIAL.cert_pem)
    ca = x509.load_pem_x509_certificate(MATERIAL.ca_cert_pem)
    public = serialization.PublicFormat.SubjectPublicKeyInfo
    der = serialization.Encoding.DER
    assert key.public_key().public_bytes(der, public) == cert.public_key().public_bytes(der, public)
    assert key.public_key().public_bytes(der, public) != ca.public_key().public_bytes(der, public)


def test_every_job_gets_its_own_ca() -> None:
    assert new_internal_tls().ca_cert_pem != MATERIAL.ca_cert_pem


def test_the_job_secret_travels_with_its_material_and_hides_both() -> None:
    secret = JobSecret(b"s" * 32, MATERIAL)
    for dumps, loads in ((pickle.dumps, pickle.loads), (cloudpickle.dumps, pickle.loads)):
        copy = loads(dumps(secret))
        assert isinstance(copy, JobSecret) and copy == b"s" * 32 and copy.tls == MATERIAL
    assert "s" * 8 not in repr(secret) and "PRIVATE" not in repr(secret)
    assert "PRIVATE" not in repr(MATERIAL)
    assert internal_tls_of(b"s" * 32) is None and internal_tls_of(secret) == MATERIAL


def test_credentials_carry_tls_only_when_the_option_is_on() -> None:
    assert new_job_credentials(Configuration()).tls is None
    config = Configuration()
    config.set_string("security.ssl.internal.enabled", "true")
    on = new_job_credentials(config)
    assert on.tls is not None and len(on) == 32


def test_a_job_secret_proves_itself_to_a_peer_holding_plain_bytes() -> None:
    server, client = socket.socketpair()
    secret = JobSecret(b"s" * 32, MATERIAL)
    done = threading.Thread(target=authenticate_server, args=(server, b"s" * 32, DATA_PLANE, 5))
    done.start()
    authenticate_client(client, secret, DATA_PLANE, 5)
    done.join(5)
    server.close()
    client.close()


def _tls_pair() -> tuple[TlsSocket, TlsSocket]:
    a, b = socket.socketpair()
    server = TlsSocket(a, internal_context(MATERIAL, TlsRole.SERVER), TlsRole.SERVER, "test")
    client = TlsSocket(b, internal_context(MATERIAL, TlsRole.CLIENT), TlsRole.CLIENT, "test")
    side = threading.Thread(target=server.handshake, args=(5.0,))
    side.start()
    client.handshake(5.0)
    side.join(5)
    assert server.handshake_done and client.handshake_done
    return server, client


def test_records_both_ways_with_a_reader_beside_a_sender() -> None:
    server, client = _tls_pair()
    payload = bytes(range(256)) * 8_000  # 2 MB
    received = bytearray()

    def read() -> None:
        while len(received) < len(payload):
            received.extend(server.recv(100_000))

    reader = threading.Thread(target=read)
    reader.start()
    client.sendall(payload)
    server.sendall(b"meanwhile")  # the server sends while its reader is blocked in recv
    assert client.recv(100) == b"meanwhile"
    reader.join(10)
    assert bytes(received) == payload
    server.close()
    client.close()


def test_decrypted_bytes_wait_in_the_socket_and_say_so() -> None:
    server, client = _tls_pair()
    client.sendall(b"abc")
    first = server.recv(1)
    assert first == b"a" and server.buffered_input
    assert server.recv(10) == b"bc" and not server.buffered_input
    server.close()
    client.close()


def test_a_non_blocking_sender_seals_at_most_its_budget_and_keeps_what_waits() -> None:
    server, client = _tls_pair()
    client.setblocking(False)
    chunks = [b"x" * 100_000] * 40  # 4 MB offered, far more than the socket buffers take
    sealed = 0
    for _ in range(100):
        taken = client.sendmsg(chunks)
        assert taken == SEND_BUDGET  # one budget per call, never all that is offered
        sealed += taken
        if client.wants_write:  # the socket is full: sealed bytes wait, nothing more is taken
            with pytest.raises(BlockingIOError):
                client.sendmsg(chunks)
            break
    assert client.wants_write
    received = 0
    server.settimeout(5)
    while received < sealed:
        received += len(server.recv(1 << 20))
        client.flush_output()
    assert received == sealed and not client.wants_write
    server.close()
    client.close()


def test_a_tampered_record_is_a_typed_error_not_data() -> None:
    left, relay_in = socket.socketpair()
    relay_out, right = socket.socketpair()
    tamper = threading.Event()

    def relay(source: socket.socket, sink: socket.socket, flip: bool) -> None:
        try:
            while data := source.recv(65536):
                if flip and tamper.is_set():
                    data = data[:-1] + bytes([data[-1] ^ 1])
                    tamper.clear()
                sink.sendall(data)
        except OSError:  # the test closed the sockets
            pass

    threads = [threading.Thread(target=relay, args=(relay_in, relay_out, True), daemon=True),
               threading.Thread(target=relay, args=(relay_out, relay_in, False), daemon=True)]
    for thread in threads:
        thread.start()
    server = TlsSocket(right, internal_context(MATERIAL, TlsRole.SERVER), TlsRole.SERVER, "data")
    client = TlsSocket(left, internal_context(MATERIAL, TlsRole.CLIENT), TlsRole.CLIENT, "data")
    side = threading.Thread(target=server.handshake, args=(5.0,))
    side.start()
    client.handshake(5.0)
    side.join(5)
    client.sendall(b"intact")
    assert server.recv(100) == b"intact"
    tamper.set()
    client.sendall(b"pay 100 to alice")
    server.settimeout(5)
    with pytest.raises(TlsRecordError, match="data plane"):
        server.recv(100)
    for sock in (server, client, relay_in, relay_out):
        sock.close()


def test_a_handshake_against_silence_ends_at_its_deadline() -> None:
    quiet, end = socket.socketpair()
    client = TlsSocket(end, internal_context(MATERIAL, TlsRole.CLIENT), TlsRole.CLIENT, "data")
    started = time.monotonic()
    with pytest.raises(AuthenticationError) as late:
        client.handshake(0.3)
    assert late.value.reason is AuthFailure.TIMEOUT
    assert time.monotonic() - started < 3
    quiet.close()
    end.close()


@pytest.mark.parametrize(("host", "warned"), [
    ("127.0.0.1", False), ("::1", False), ("localhost", False),
    ("0.0.0.0", True), ("10.1.2.3", True), ("worker-7.cluster", True),
])
def test_a_clear_text_listener_beyond_loopback_is_warned_about(
    host: str, warned: bool, caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level("WARNING", logger="flintlock.runtime.tls.contexts")
    assert warn_if_exposed(host, "the data server", "security.ssl.internal.enabled") is warned
    assert ("security.ssl.internal.enabled" in caplog.text) is warned
