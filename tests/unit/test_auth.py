"""The job-secret handshake: the I/O-free core, then the blocking socket helpers."""

from __future__ import annotations

import itertools
import pickle
import select
import socket
import threading
from collections.abc import Callable

import pytest
from hypothesis import given
from hypothesis import strategies as st

from flintlock.common.errors import FlintlockError
from flintlock.runtime import auth
from flintlock.runtime.auth import (
    CONTROL_PLANE,
    DATA_PLANE,
    AuthenticationError,
    AuthFailure,
    ClientHandshake,
    HandshakeState,
    ServerHandshake,
    authenticate_client,
    authenticate_server,
    new_job_secret,
)

SECRET = b"s" * 32
OTHER = b"o" * 32


def counting_nonces(start: int) -> Callable[[int], bytes]:
    counter = itertools.count(start)
    return lambda size: next(counter).to_bytes(size, "big")


def run_handshake(
    server_secret: bytes, client_secret: bytes, server_ctx: str = CONTROL_PLANE,
    client_ctx: str = CONTROL_PLANE,
) -> tuple[ServerHandshake, ClientHandshake, AuthenticationError | None]:
    server = ServerHandshake(server_secret, server_ctx, counting_nonces(1))
    client = ClientHandshake(client_secret, client_ctx, counting_nonces(100))
    response = client.receive_challenge(server.challenge())
    confirm, server_error = server.receive_response(response)
    try:
        client.receive_confirm(confirm)
    except AuthenticationError as exc:
        assert server_error is not None
        return server, client, exc
    return server, client, server_error


def test_same_secret_authenticates_both_sides():
    server, client, error = run_handshake(SECRET, SECRET)
    assert error is None
    assert server.authenticated and client.authenticated


def test_wrong_secret_is_rejected_on_both_sides():
    server, client, client_error = run_handshake(SECRET, OTHER)
    assert client_error is not None and client_error.reason is AuthFailure.WRONG_SECRET
    assert "rejected" in str(client_error)
    assert server.state is HandshakeState.FAILED
    assert client.state is HandshakeState.FAILED


def test_a_data_plane_proof_is_refused_on_the_control_plane():
    server, _, error = run_handshake(SECRET, SECRET, CONTROL_PLANE, DATA_PLANE)
    assert error is not None and error.reason is AuthFailure.WRONG_SECRET
    assert not server.authenticated


def test_a_recorded_response_cannot_be_replayed_on_a_new_connection():
    first = ServerHandshake(SECRET, CONTROL_PLANE, counting_nonces(1))
    client = ClientHandshake(SECRET, CONTROL_PLANE, counting_nonces(100))
    recorded = client.receive_challenge(first.challenge())
    second = ServerHandshake(SECRET, CONTROL_PLANE, counting_nonces(2))
    second.challenge()
    _, error = second.receive_response(recorded)
    assert error is not None and error.reason is AuthFailure.WRONG_SECRET


def test_a_server_that_does_not_know_the_secret_is_caught_by_the_client():
    client = ClientHandshake(SECRET, CONTROL_PLANE, counting_nonces(100))
    client.receive_challenge(auth.MAGIC + bytes(auth.NONCE_SIZE))
    forged = auth.MAGIC + b"\x01" + bytes(auth.PROOF_SIZE)
    with pytest.raises(AuthenticationError, match="could not prove") as info:
        client.receive_confirm(forged)
    assert info.value.reason is AuthFailure.WRONG_SECRET


def test_a_client_proof_reflected_as_the_server_proof_is_refused():
    server = ServerHandshake(SECRET, CONTROL_PLANE, counting_nonces(1))
    client = ClientHandshake(SECRET, CONTROL_PLANE, counting_nonces(100))
    response = client.receive_challenge(server.challenge())
    client_proof = response[-auth.PROOF_SIZE:]
    with pytest.raises(AuthenticationError):
        client.receive_confirm(auth.MAGIC + b"\x01" + client_proof)


def test_garbage_is_malformed_and_answered_with_a_rejection():
    server = ServerHandshake(SECRET, CONTROL_PLANE)
    server.challenge()
    confirm, error = server.receive_response(b"GET / HTTP/1.1\r\n".ljust(auth.RESPONSE_SIZE))
    assert error is not None and error.reason is AuthFailure.MALFORMED
    assert confirm[len(auth.MAGIC)] == 0
    client = ClientHandshake(SECRET, CONTROL_PLANE)
    with pytest.raises(AuthenticationError) as info:
        client.receive_challenge(b"short")
    assert info.value.reason is AuthFailure.MALFORMED


def test_steps_out_of_order_are_illegal():
    server = ServerHandshake(SECRET, CONTROL_PLANE)
    with pytest.raises(AuthenticationError) as info:
        server.receive_response(bytes(auth.RESPONSE_SIZE))
    assert info.value.reason is AuthFailure.ILLEGAL_STATE
    server.challenge()
    with pytest.raises(AuthenticationError):
        server.challenge()


def test_bytes_expected_follow_the_state():
    server = ServerHandshake(SECRET, CONTROL_PLANE)
    client = ClientHandshake(SECRET, CONTROL_PLANE)
    assert client.bytes_expected == auth.CHALLENGE_SIZE
    response = client.receive_challenge(server.challenge())
    assert server.bytes_expected == auth.RESPONSE_SIZE
    assert client.bytes_expected == auth.CONFIRM_SIZE
    client.receive_confirm(server.receive_response(response)[0])
    assert client.bytes_expected == server.bytes_expected == 0


def test_secrets_are_32_random_bytes_and_short_ones_refused():
    first, second = new_job_secret(), new_job_secret()
    assert len(first) == 32 and first != second
    with pytest.raises(ValueError):
        ServerHandshake(b"short", CONTROL_PLANE)


def test_the_error_is_typed_and_survives_pickling():
    error = AuthenticationError(AuthFailure.TIMEOUT, "waiting for the response")
    copy = pickle.loads(pickle.dumps(error))
    assert isinstance(copy, FlintlockError) and isinstance(copy, ConnectionError)
    assert copy.reason is AuthFailure.TIMEOUT and str(copy) == str(error)


@given(st.binary(min_size=16, max_size=64), st.binary(min_size=16, max_size=64))
def test_authenticated_exactly_when_the_secrets_are_equal(left: bytes, right: bytes):
    server, client, error = run_handshake(left, right)
    assert (error is None) == (left == right)
    assert server.authenticated == client.authenticated == (left == right)


@given(st.binary(min_size=auth.RESPONSE_SIZE, max_size=auth.RESPONSE_SIZE))
def test_no_forged_response_is_accepted(forged: bytes):
    server = ServerHandshake(SECRET, CONTROL_PLANE, counting_nonces(1))
    server.challenge()
    _, error = server.receive_response(forged)
    assert error is not None and not server.authenticated


# -- over real sockets -------------------------------------------------------------------


def over_socketpair(
    server_side: Callable[[socket.socket], None], client_side: Callable[[socket.socket], None]
) -> tuple[BaseException | None, BaseException | None]:
    left, right = socket.socketpair()
    outcomes: dict[str, BaseException | None] = {}

    def run(name: str, side: Callable[[socket.socket], None], sock: socket.socket) -> None:
        try:
            side(sock)
            outcomes[name] = None
        except BaseException as exc:
            outcomes[name] = exc
        finally:
            sock.close()

    thread = threading.Thread(target=run, args=("server", server_side, left))
    thread.start()
    run("client", client_side, right)
    thread.join(timeout=10)
    assert not thread.is_alive()
    return outcomes["server"], outcomes["client"]


def test_sockets_authenticate_with_the_same_secret():
    server_error, client_error = over_socketpair(
        lambda s: authenticate_server(s, SECRET, DATA_PLANE, 5),
        lambda s: authenticate_client(s, SECRET, DATA_PLANE, 5),
    )
    assert server_error is None and client_error is None


def test_sockets_refuse_a_wrong_secret_on_both_ends():
    server_error, client_error = over_socketpair(
        lambda s: authenticate_server(s, SECRET, DATA_PLANE, 5),
        lambda s: authenticate_client(s, OTHER, DATA_PLANE, 5),
    )
    assert isinstance(server_error, AuthenticationError)
    assert isinstance(client_error, AuthenticationError)
    assert server_error.reason is client_error.reason is AuthFailure.WRONG_SECRET


def test_garbage_then_close_reports_the_peer_closed():
    def garbage(sock: socket.socket) -> None:
        sock.recv(auth.CHALLENGE_SIZE)
        sock.sendall(b"hello")

    server_error, _ = over_socketpair(lambda s: authenticate_server(s, SECRET, DATA_PLANE, 5),
                                      garbage)
    assert isinstance(server_error, AuthenticationError)
    assert server_error.reason is AuthFailure.PEER_CLOSED
    assert "5 of 68 bytes" in str(server_error)


def test_a_silent_peer_times_out():
    release = threading.Event()

    def silent(sock: socket.socket) -> None:
        release.wait(10)

    def server(sock: socket.socket) -> None:
        try:
            authenticate_server(sock, SECRET, DATA_PLANE, 0.05)
        finally:
            release.set()

    server_error, _ = over_socketpair(server, silent)
    assert isinstance(server_error, AuthenticationError)
    assert server_error.reason is AuthFailure.TIMEOUT


def test_the_socket_timeout_is_restored_after_the_handshake():
    def server(sock: socket.socket) -> None:
        sock.settimeout(None)
        authenticate_server(sock, SECRET, DATA_PLANE, 5)
        assert sock.gettimeout() is None

    server_error, client_error = over_socketpair(
        server, lambda s: authenticate_client(s, SECRET, DATA_PLANE, 5)
    )
    assert server_error is None and client_error is None


# -- the non-blocking accepting side --------------------------------------------------------


def _drive(handshake: auth.AcceptingHandshake, sock: socket.socket
           ) -> auth.HandshakeEnded:
    """Feeds the handshake as a selector loop would, until it ends (bounded)."""
    ended = handshake.start()
    while ended is None:
        readable, _, _ = select.select([sock], [], [], 10)
        assert readable, "the handshake made no progress"
        ended = handshake.on_readable()
    return ended


@pytest.mark.parametrize(("client_secret", "reason"), [(SECRET, None),
                                                       (OTHER, AuthFailure.WRONG_SECRET)])
def test_the_accepting_handshake_runs_on_a_non_blocking_socket(client_secret, reason):
    server_side, client_side = socket.socketpair()
    server_side.setblocking(False)
    outcome: list[BaseException | None] = []

    def client() -> None:
        try:
            authenticate_client(client_side, client_secret, DATA_PLANE, 5)
            outcome.append(None)
        except AuthenticationError as exc:
            outcome.append(exc)

    thread = threading.Thread(target=client)
    thread.start()
    try:
        ended = _drive(auth.AcceptingHandshake(server_side, SECRET, DATA_PLANE), server_side)
        thread.join(10)
        if reason is None:
            assert ended.error is None and outcome == [None]
        else:
            assert ended.error is not None and ended.error.reason is reason
            assert isinstance(outcome[0], AuthenticationError)
    finally:
        server_side.close()
        client_side.close()


def test_the_accepting_handshake_expires_with_what_it_got():
    server_side, client_side = socket.socketpair()
    server_side.setblocking(False)
    try:
        handshake = auth.AcceptingHandshake(server_side, SECRET, DATA_PLANE)
        assert handshake.start() is None
        client_side.sendall(auth.MAGIC + b"x")
        select.select([server_side], [], [], 10)
        assert handshake.on_readable() is None
        ended = handshake.expire()
        assert ended.error is not None and ended.error.reason is AuthFailure.TIMEOUT
        assert "5 of 68 bytes" in str(ended.error)
        assert handshake.on_readable() is ended  # over: nothing more is read
    finally:
        server_side.close()
        client_side.close()
