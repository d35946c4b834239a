"""The REST endpoint against clients that misbehave (issue 14): silent connections pin no
thread, a trickling request is cut at an absolute deadline, excess unauthenticated
connections are refused at once, and closing never waits for a slow client."""

from __future__ import annotations

import logging
import socket
import threading
from collections.abc import Iterator

import pytest

from flintlock.runtime.rest.server import RestEndpoint
from flintlock.testing.waiting import wait_until
from tests.bad_clients import WAIT_S, Trickler, close_all, closed_by_peer, open_silent
from tests.unit.rest_support import FakeJob, call

REST_THREADS = 5  # the loop thread and at most four workers
A_REQUEST = b"GET /jobs HTTP/1.0\r\nAuthorization: Bearer " + b"t" * 43 + b"\r\n\r\n"


@pytest.fixture
def endpoint(tmp_path) -> Iterator[RestEndpoint]:
    endpoint = RestEndpoint("127.0.0.1", 0, jobs_directory=tmp_path)
    endpoint.serve(FakeJob(), "fake")
    yield endpoint
    endpoint.close()


def test_200_silent_connections_create_a_bounded_number_of_threads(tmp_path) -> None:
    before = threading.active_count()
    endpoint = RestEndpoint("127.0.0.1", 0, jobs_directory=tmp_path).serve(FakeJob(), "fake")
    try:
        silent = open_silent(endpoint.address, 200)
        try:
            # accepted in order: once the last one is refused (over the cap), all were accepted
            assert closed_by_peer(silent[-1])
            assert threading.active_count() - before <= REST_THREADS
            assert not closed_by_peer(silent[0], timeout_s=0.1)  # the first ones wait
        finally:
            close_all(silent)
        wait_until(lambda: _answers(endpoint))  # the flood is gone: others get in
    finally:
        endpoint.close()
    assert threading.active_count() <= before


def _answers(endpoint: RestEndpoint) -> bool:
    try:
        return call(endpoint, "GET", "/jobs")[0] == 200
    except OSError:
        return False


def test_connections_above_the_cap_are_closed_at_once_and_logged_once(
    tmp_path, caplog: pytest.LogCaptureFixture
) -> None:
    endpoint = RestEndpoint("127.0.0.1", 0, jobs_directory=tmp_path, max_pending_requests=4)
    endpoint.serve(FakeJob(), "fake")
    try:
        with caplog.at_level(logging.WARNING, logger="flintlock.runtime.rest.server"):
            silent = open_silent(endpoint.address, 10)
            try:
                closed = [closed_by_peer(sock, timeout_s=0.5) for sock in silent]
                assert closed == [False] * 4 + [True] * 6
            finally:
                close_all(silent)
        refusals = [r for r in caplog.records if "unauthenticated" in r.getMessage()]
        assert len(refusals) == 1
        wait_until(lambda: _answers(endpoint))
    finally:
        endpoint.close()


def test_a_trickling_request_is_cut_at_an_absolute_deadline(tmp_path) -> None:
    endpoint = RestEndpoint("127.0.0.1", 0, jobs_directory=tmp_path, request_timeout_s=0.5)
    endpoint.serve(FakeJob(), "fake")
    try:
        # each byte well within the deadline, the whole request far beyond it
        slow = Trickler(endpoint.address, A_REQUEST, period_s=0.1)
        try:
            assert slow.closed_by_peer.wait(WAIT_S)
            assert slow.bytes_sent < len(A_REQUEST)
        finally:
            slow.close()
        assert call(endpoint, "GET", "/jobs")[0] == 200
    finally:
        endpoint.close()


def test_close_does_not_wait_for_a_slow_client(endpoint: RestEndpoint) -> None:
    slow = Trickler(endpoint.address, A_REQUEST, period_s=0.5)
    try:
        assert slow.started_sending.wait(WAIT_S)
        closer = threading.Thread(target=endpoint.close)
        closer.start()
        closer.join(WAIT_S)
        assert not closer.is_alive()
        assert not slow.finished_sending.is_set()  # it was cut, not waited for
    finally:
        slow.close()


def test_a_silent_connection_does_not_delay_a_good_request(endpoint: RestEndpoint) -> None:
    silent = open_silent(endpoint.address, 3)
    try:
        assert call(endpoint, "GET", "/jobs")[0] == 200
    finally:
        close_all(silent)


def test_a_request_without_the_token_is_refused_before_its_body_is_read(
    endpoint: RestEndpoint,
) -> None:
    sock = socket.create_connection(endpoint.address, timeout=WAIT_S)
    try:  # announces a body it never sends: the 401 comes anyway, at once
        sock.sendall(b"POST /jobs HTTP/1.0\r\nContent-Length: 60000\r\n\r\n")
        assert sock.recv(65536).startswith(b"HTTP/1.0 401 ")
    finally:
        sock.close()


def test_a_request_still_arriving_at_the_deadline_gets_a_408(tmp_path) -> None:
    endpoint = RestEndpoint("127.0.0.1", 0, jobs_directory=tmp_path, request_timeout_s=0.2)
    endpoint.serve(FakeJob(), "fake")
    try:
        with socket.create_connection(endpoint.address, timeout=WAIT_S) as sock:
            sock.sendall(b"GET /jobs HTTP/1.0\r\n")  # and no more
            assert sock.recv(65536).startswith(b"HTTP/1.0 408 ")
    finally:
        endpoint.close()
