"""RpcServer / RpcClient over loopback TCP: calls, tells, pushes, failures, clean shutdown."""

from __future__ import annotations

import logging
import os
import queue
import socket
import struct
import threading
from collections.abc import Iterator

import pytest

from flintlock.runtime.auth import (
    CHALLENGE_SIZE,
    RESPONSE_SIZE,
    AuthenticationError,
)
from flintlock.runtime.rpc import (
    ConnectionLostError,
    FrameTooLargeError,
    MalformedFrameError,
    MessageDispatcher,
    RemoteCallError,
    RemoteTraceback,
    RpcClient,
    RpcClosedError,
    RpcServer,
    RpcTimeoutError,
    UnknownMessageError,
)
from flintlock.runtime.rpc.frames import HEADER, MAGIC, FrameKind
from tests.unit.rpc_support import (
    SECRET,
    WAIT_S,
    AskBack,
    Block,
    Echo,
    Fail,
    Goodbye,
    Note,
    Recorder,
    authenticated_raw_socket,
    connect,
)


def open_fds() -> set[str]:
    return set(os.listdir("/proc/self/fd"))


@pytest.fixture
def leak_check() -> Iterator[None]:
    threads_before = set(threading.enumerate())
    fds_before = open_fds()
    yield
    leftover = [t.name for t in threading.enumerate() if t not in threads_before]
    assert leftover == []
    assert open_fds() <= fds_before


@pytest.fixture
def recorder() -> Recorder:
    return Recorder()


@pytest.fixture
def server(recorder: Recorder, leak_check: None) -> Iterator[RpcServer]:
    with RpcServer(recorder.dispatcher, SECRET) as rpc_server:
        yield rpc_server


def test_a_call_gets_its_reply_and_a_tell_arrives(server: RpcServer, recorder: Recorder):
    client = connect(server)
    try:
        assert client.call(Echo("hi"), WAIT_S) == "echo:hi"
        for text in ("one", "two", "three"):
            client.tell(Note(text))
        assert [recorder.notes.get(timeout=WAIT_S) for _ in range(3)] == ["one", "two", "three"]
    finally:
        client.close()


def test_concurrent_calls_get_their_own_replies(server: RpcServer):
    client = connect(server)
    results: dict[int, object] = {}

    def ask(index: int) -> None:
        results[index] = client.call(Echo(str(index)), WAIT_S)

    threads = [threading.Thread(target=ask, args=(i,)) for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(WAIT_S)
    client.close()
    assert results == {i: f"echo:{i}" for i in range(8)}


def test_the_server_pushes_to_a_connected_client(server: RpcServer):
    pushed: queue.Queue[str] = queue.Queue()
    client_handler = (
        MessageDispatcher()
        .register(Note, lambda conn, msg: pushed.put(msg.text))
        .register(Echo, lambda conn, msg: f"tm:{msg.text}")
    )
    client = connect(server, client_handler)
    client.call(Echo("register"), WAIT_S)
    (tm,) = server.connections()
    tm.tell(Note("deploy"))
    assert pushed.get(timeout=WAIT_S) == "deploy"
    assert tm.call(Echo("trigger"), WAIT_S) == "tm:trigger"
    client.close()


def test_a_handler_may_call_the_peer_back(server: RpcServer):
    client = connect(server, MessageDispatcher().register(Echo, lambda c, m: m.text.upper()))
    assert client.call(AskBack("nested"), WAIT_S) == "NESTED"
    client.close()


def test_a_remote_exception_comes_back_typed_with_its_traceback(server: RpcServer):
    client = connect(server)
    with pytest.raises(ValueError, match="bad value x") as info:
        client.call(Fail("x"), WAIT_S)
    cause = info.value.__cause__
    assert isinstance(cause, RemoteTraceback) and "in _fail" in cause.text
    with pytest.raises(RemoteCallError) as remote:
        client.call(Fail("unpicklable"), WAIT_S)
    assert remote.value.type_name.endswith("Unpicklable")
    assert "cannot travel" in str(remote.value) and "in _fail" in remote.value.remote_traceback
    with pytest.raises(UnknownMessageError, match="int"):
        client.call(42, WAIT_S)
    assert client.call(Echo("still fine"), WAIT_S) == "echo:still fine"
    client.close()


def test_a_call_without_reply_times_out(server: RpcServer, recorder: Recorder):
    client = connect(server)
    with pytest.raises(RpcTimeoutError, match="Block"):
        client.call(Block("later"), 0.05)
    recorder.released.set()
    assert client.call(Echo("after"), WAIT_S) == "echo:after"
    client.close()


def test_a_wrong_secret_is_refused_and_nothing_is_processed(
    server: RpcServer, recorder: Recorder, caplog: pytest.LogCaptureFixture
):
    host, port = server.address
    with caplog.at_level(logging.WARNING, logger="flintlock.runtime.rpc.server"):
        with pytest.raises(AuthenticationError, match="wrong secret"):
            RpcClient.connect(host, port, b"w" * 32)
        client = connect(server)
        client.call(Echo("sync"), WAIT_S)
        assert len(server.connections()) == 1
        client.close()
        assert isinstance(recorder.disconnects.get(timeout=WAIT_S), ConnectionLostError)
        server.close()
    assert any("refused RPC connection" in r.getMessage() for r in caplog.records)
    assert recorder.disconnects.empty() and recorder.notes.empty()


@pytest.mark.parametrize(
    ("garbage", "error_type"),
    [
        (b"this is not a frame at all", MalformedFrameError),
        (HEADER.pack(MAGIC, FrameKind.TELL, 0, 2**31), FrameTooLargeError),
        (HEADER.pack(MAGIC, FrameKind.TELL, 0, 3) + b"abc", MalformedFrameError),
    ],
)
def test_a_malformed_frame_closes_only_that_connection(
    server: RpcServer, recorder: Recorder, garbage: bytes, error_type: type
):
    good = connect(server)
    bad = authenticated_raw_socket(server)
    bad.sendall(garbage)
    assert bad.recv(1) == b""
    bad.close()
    assert isinstance(recorder.disconnects.get(timeout=WAIT_S), error_type)
    assert good.call(Echo("unaffected"), WAIT_S) == "echo:unaffected"
    good.close()


def test_garbage_before_authentication_is_refused(server: RpcServer, recorder: Recorder):
    sock = socket.create_connection(server.address, timeout=WAIT_S)
    sock.recv(64)
    sock.sendall(b"\x80\x05".ljust(RESPONSE_SIZE, b"x"))
    assert sock.recv(64)[4] == 0
    assert sock.recv(64) == b""
    sock.close()
    assert recorder.disconnects.empty() and recorder.notes.empty()


def test_a_peer_that_vanishes_mid_frame_is_reported(server: RpcServer, recorder: Recorder):
    sock = authenticated_raw_socket(server)
    sock.sendall(HEADER.pack(MAGIC, FrameKind.TELL, 0, 100) + b"partial")
    sock.close()
    cause = recorder.disconnects.get(timeout=WAIT_S)
    assert isinstance(cause, ConnectionLostError) and "mid-frame" in str(cause)


def test_closing_the_server_fails_the_clients_pending_calls(recorder: Recorder, leak_check: None):
    rpc_server = RpcServer(recorder.dispatcher, SECRET)
    client = connect(rpc_server)
    outcome: queue.Queue[BaseException] = queue.Queue()

    def blocked_call() -> None:
        try:
            client.call(Block("never"), WAIT_S)
        except BaseException as exc:
            outcome.put(exc)

    caller = threading.Thread(target=blocked_call)
    caller.start()
    closer = threading.Thread(target=rpc_server.close)
    closer.start()
    assert isinstance(outcome.get(timeout=WAIT_S), ConnectionLostError)
    recorder.released.set()
    closer.join(WAIT_S)
    caller.join(WAIT_S)
    with pytest.raises(ConnectionLostError):
        client.tell(Note("too late"))
    client.close()


def test_a_closed_client_refuses_to_send_and_the_server_sees_it_leave(
    server: RpcServer, recorder: Recorder
):
    client = connect(server)
    client.call(Echo("hello"), WAIT_S)
    client.close()
    client.close()
    with pytest.raises(RpcClosedError):
        client.tell(Note("after close"))
    assert isinstance(recorder.disconnects.get(timeout=WAIT_S), ConnectionLostError)


def test_the_endpoint_binds_loopback_from_the_configuration(recorder: Recorder, leak_check: None):
    from flintlock.common.config import Configuration

    rpc_server = RpcServer.from_config(Configuration(), recorder.dispatcher, SECRET)
    try:
        assert rpc_server.address[0] == "127.0.0.1" and rpc_server.address[1] > 0
    finally:
        rpc_server.close()


def test_header_layout_is_fixed():
    assert HEADER.size == struct.calcsize("!2sBQI") == 15


def test_a_handler_may_close_its_own_connection(server: RpcServer, recorder: Recorder):
    client = connect(server)
    client.tell(Goodbye())
    assert recorder.disconnects.get(timeout=WAIT_S) is None
    assert client.closed.wait(WAIT_S)
    with pytest.raises(ConnectionLostError):
        client.call(Echo("anyone?"), WAIT_S)
    client.close()


def test_a_silent_client_neither_blocks_others_nor_the_close(recorder: Recorder,
                                                            leak_check: None):
    rpc_server = RpcServer(recorder.dispatcher, SECRET, handshake_timeout_s=3600)
    silent = socket.create_connection(rpc_server.address, timeout=WAIT_S)
    assert len(silent.recv(64)) == CHALLENGE_SIZE
    client = connect(rpc_server)
    assert client.call(Echo("not blocked"), WAIT_S) == "echo:not blocked"
    client.close()
    rpc_server.close()
    assert silent.recv(64) == b""
    silent.close()
