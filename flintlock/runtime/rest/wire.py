"""HTTP/1.0 on the wire for the REST endpoint, without I/O: requests read from bytes as they
arrive (``RequestReader``), responses written as bytes (``encode_response``).

A request is read in two steps so that the server can check the bearer token between them:
the *head* (request line and headers, at most ``MAX_HEAD_BYTES``, up to the blank line),
then the *body* (``Content-Length`` bytes). The reader never holds more than it was sent, and
never more than ``MAX_HEAD_BYTES`` plus ``MAX_BODY_BYTES``:

- A head over its limit is a 431, a head that is not HTTP is a 400 (``HttpError`` from
  ``feed``); nothing of it reaches the API.
- A ``Content-Length`` that is not a number or over ``MAX_BODY_BYTES`` is not read at all:
  the request completes without its body, and ``body()`` raises the 400 or 413 when (and only
  if) the route asks for the body — so a GET with a large body is still answered.
- Bytes after the body are ignored: one request per connection (HTTP/1.0, no pipelining).

Who calls it: ``httpd.HttpServer``'s loop thread, which owns each reader.
"""

from __future__ import annotations

import email.utils
import enum
import http.client
import io
import json
from collections.abc import Iterable
from dataclasses import dataclass
from http import HTTPStatus
from typing import Any, Final

from flintlock.runtime.rest.http_types import HttpError

MAX_HEAD_BYTES: Final = 16 * 1024
MAX_BODY_BYTES: Final = 64 * 1024
_HEAD_ENDS: Final = (b"\r\n\r\n", b"\n\n")


class ReaderState(enum.Enum):
    HEAD = "head"
    BODY = "body"
    COMPLETE = "complete"


@dataclass(frozen=True, slots=True)
class RequestHead:
    method: str
    target: str  # path and query, as sent
    authorization: str | None
    content_length: int  # what will be read: 0 when there is no body or it is refused
    body_error: HttpError | None  # the body was refused; raised if the route reads it


class RequestReader:
    """Assembles one request from the bytes fed to it; see the module doc."""

    def __init__(self, max_head: int = MAX_HEAD_BYTES, max_body: int = MAX_BODY_BYTES) -> None:
        self._max_head = max_head
        self._max_body = max_body
        self._buffer = bytearray()
        self.state = ReaderState.HEAD
        self.head: RequestHead | None = None

    @property
    def complete(self) -> bool:
        return self.state is ReaderState.COMPLETE

    def feed(self, data: bytes) -> None:
        """Takes received bytes; raises ``HttpError`` for a head that is too long or not HTTP."""
        if self.state is ReaderState.COMPLETE:
            return
        self._buffer += data
        if self.state is ReaderState.HEAD:
            self._try_head()
        if self.state is ReaderState.BODY and self.head is not None:
            if len(self._buffer) >= self.head.content_length:
                del self._buffer[self.head.content_length:]
                self.state = ReaderState.COMPLETE

    def body(self) -> bytes:
        """The request's body (after ``complete``); raises the refusal of an oversized one."""
        if self.head is not None and self.head.body_error is not None:
            raise self.head.body_error
        return bytes(self._buffer) if self.complete else b""

    def _try_head(self) -> None:
        end = _head_end(self._buffer)
        if end < 0:
            if len(self._buffer) > self._max_head:
                raise HttpError(431, f"request head over {self._max_head} bytes")
            return
        if end > self._max_head:
            raise HttpError(431, f"request head over {self._max_head} bytes")
        self.head = self._parse_head(bytes(self._buffer[:end]))
        del self._buffer[:end]
        self.state = ReaderState.BODY if self.head.content_length else ReaderState.COMPLETE

    def _parse_head(self, raw: bytes) -> RequestHead:
        line, _, rest = raw.partition(b"\n")
        parts = line.decode("iso-8859-1").split()
        if len(parts) != 3 or not parts[2].startswith("HTTP/1."):
            raise HttpError(400, f"not an HTTP/1.x request line: {line[:80]!r}")
        try:
            headers = http.client.parse_headers(io.BytesIO(rest))
        except http.client.HTTPException as exc:
            raise HttpError(400, f"bad request headers: {exc}") from None
        length, error = self._body_length(headers.get("Content-Length"))
        return RequestHead(parts[0], parts[1], headers.get("Authorization"), length, error)

    def _body_length(self, raw: str | None) -> tuple[int, HttpError | None]:
        if raw is None:
            return 0, None
        try:
            length = int(raw)
        except ValueError:
            return 0, HttpError(400, f"bad Content-Length header {raw!r}")
        if length < 0:
            return 0, HttpError(400, f"bad Content-Length header {raw!r}")
        if length > self._max_body:
            return 0, HttpError(413, f"request body of {length} bytes is over the "
                                     f"{self._max_body}-byte limit")
        return length, None


def _head_end(buffer: bytearray) -> int:
    """Where the head ends (after its blank line), or -1 if it has not ended yet."""
    ends = [(at + len(marker)) for marker in _HEAD_ENDS if (at := buffer.find(marker)) >= 0]
    return min(ends) if ends else -1


def encode_response(status: int, body: Any, headers: Iterable[tuple[str, str]] = (),
                    content_type: str | None = None) -> bytes:
    """A complete HTTP/1.0 response with a JSON body, or with ``content_type`` the bytes
    ``body`` as they are; the connection closes after it."""
    if content_type is None:
        payload = json.dumps(body).encode("utf-8")
        content_type = "application/json; charset=utf-8"
    else:
        payload = bytes(body)
    lines = [
        f"HTTP/1.0 {status} {_reason(status)}",
        "Server: flintlock",
        f"Date: {email.utils.formatdate(usegmt=True)}",
        f"Content-Type: {content_type}",
        f"Content-Length: {len(payload)}",
        *(f"{name}: {value}" for name, value in headers),
        "Connection: close",
    ]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("iso-8859-1") + payload


def _reason(status: int) -> str:
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return "Unknown"
