"""The REST API's request, response and refusal types, shared by the API, the HTTP server,
the history server and the metrics reporter. Pure data."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from flintlock.common.errors import FlintlockError


class HttpError(FlintlockError):
    """A request the API refuses; ``status`` is the HTTP status code."""

    def __init__(self, status: int, message: str, headers: tuple[tuple[str, str], ...] = ()
                 ) -> None:
        super().__init__(status, message, headers)
        self.status = status
        self.message = message
        self.headers = headers

    def __str__(self) -> str:
        return f"{self.status}: {self.message}"


@dataclass(frozen=True, slots=True)
class RestRequest:
    """One HTTP request; the body is read only if the route needs it (after auth)."""

    method: str
    path: str
    query: Mapping[str, list[str]]
    authorization: str | None
    read_body: Callable[[], bytes]


@dataclass(frozen=True, slots=True)
class RestResponse:
    """``body`` is JSON, or with a ``content_type`` the bytes to send as they are."""

    status: int
    body: Any
    headers: tuple[tuple[str, str], ...] = ()
    content_type: str | None = None
