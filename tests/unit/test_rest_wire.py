"""HTTP/1.0 requests read as their bytes arrive, and responses written, without I/O."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from flintlock.runtime.rest.api import HttpError
from flintlock.runtime.rest.wire import (
    MAX_BODY_BYTES,
    MAX_HEAD_BYTES,
    ReaderState,
    RequestReader,
    encode_response,
)

POST = (b"POST /jobs/x/stop?mode=a HTTP/1.1\r\nHost: h\r\nAuthorization: Bearer t\r\n"
        b"Content-Length: 7\r\n\r\n{\"a\":1}")


@given(st.lists(st.integers(1, len(POST)), max_size=10))
def test_a_request_in_any_pieces_reads_the_same(cuts: list[int]) -> None:
    reader = RequestReader()
    previous = 0
    for cut in [*sorted(set(cuts)), len(POST)]:
        reader.feed(POST[previous:cut])
        previous = cut
    assert reader.complete and reader.head is not None
    assert (reader.head.method, reader.head.target) == ("POST", "/jobs/x/stop?mode=a")
    assert reader.head.authorization == "Bearer t"
    assert reader.body() == b'{"a":1}'


def test_the_head_is_known_before_the_body_arrives() -> None:
    reader = RequestReader()
    reader.feed(POST[:-7])
    assert reader.state is ReaderState.BODY and reader.head is not None
    assert reader.head.authorization == "Bearer t"  # the token can be checked now
    reader.feed(POST[-7:] + b"trailing bytes are ignored")
    assert reader.complete and reader.body() == b'{"a":1}'


def test_a_request_without_a_body_completes_with_its_head() -> None:
    reader = RequestReader()
    reader.feed(b"GET /jobs HTTP/1.0\n\n")  # bare line feeds are accepted
    assert reader.complete and reader.body() == b""


def test_an_oversized_head_is_refused_without_waiting_for_its_end() -> None:
    reader = RequestReader()
    with pytest.raises(HttpError) as info:
        reader.feed(b"GET / HTTP/1.0\r\nX: " + b"y" * MAX_HEAD_BYTES)
    assert info.value.status == 431


@pytest.mark.parametrize("line", [b"hello", b"GET / SPDY/3", b"GET  HTTP/1.0"])
def test_a_request_line_that_is_not_http_is_a_400(line: bytes) -> None:
    with pytest.raises(HttpError) as info:
        RequestReader().feed(line + b"\r\n\r\n")
    assert info.value.status == 400


@pytest.mark.parametrize(("length", "status"), [
    (str(MAX_BODY_BYTES + 1), 413), ("-1", 400), ("lots", 400)])
def test_a_refused_body_is_not_read_and_raised_only_if_asked_for(length: str, status: int
                                                                 ) -> None:
    reader = RequestReader()
    reader.feed(f"POST /x HTTP/1.0\r\nContent-Length: {length}\r\n\r\nabc".encode())
    assert reader.complete  # nothing more is read
    with pytest.raises(HttpError) as info:
        reader.body()
    assert info.value.status == status


def test_a_response_is_http_1_0_with_a_json_body() -> None:
    raw = encode_response(401, {"errors": ["no"]}, [("WWW-Authenticate", "Bearer")])
    head, _, body = raw.partition(b"\r\n\r\n")
    lines = head.decode().split("\r\n")
    assert lines[0] == "HTTP/1.0 401 Unauthorized"
    assert "WWW-Authenticate: Bearer" in lines and "Connection: close" in lines
    assert f"Content-Length: {len(body)}" in lines
    assert json.loads(body) == {"errors": ["no"]}
