"""The REST API's route table: each endpoint is one ``Route`` (method, Flink's path pattern,
handler), matched without I/O.

A pattern is Flink's notation, ``/jobs/:jobid/vertices/:vertexid/metrics``: a segment starting
with ``:`` matches any one non-empty segment and is handed to the handler by name; every other
segment must be equal. Literal segments win over parameters (``/jobs/overview`` is not the job
``overview``), so the table's order does not matter. A path some route matches with another
method is a 405 naming the allowed methods; a path no route matches is a 404.

Pure data and functions; safe on any thread.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

H = TypeVar("H")


@dataclass(frozen=True, slots=True)
class Route(Generic[H]):
    method: str
    pattern: str
    handler: H

    @property
    def segments(self) -> tuple[str, ...]:
        return _segments(self.pattern)


@dataclass(frozen=True, slots=True)
class Match(Generic[H]):
    """What a path resolved to: a handler with its path parameters, or the methods the path
    allows (``handler`` None: 405; ``allowed`` empty too: 404)."""

    handler: H | None
    params: Mapping[str, str]
    allowed: tuple[str, ...]


class RouteTable(Generic[H]):
    def __init__(self, routes: Sequence[Route[H]]) -> None:
        seen: set[tuple[str, tuple[str, ...]]] = set()
        for route in routes:
            key = (route.method, tuple("" if s.startswith(":") else s for s in route.segments))
            if key in seen:
                raise ValueError(f"two routes for {route.method} {route.pattern}")
            seen.add(key)
        self.routes = tuple(routes)

    def match(self, method: str, path: str) -> Match[H]:
        segments = _segments(path)
        found: list[tuple[int, Route[H], dict[str, str]]] = []
        for route in self.routes:
            params = _bind(route.segments, segments)
            if params is not None:
                literals = sum(not s.startswith(":") for s in route.segments)
                found.append((literals, route, params))
        if not found:
            return Match(None, {}, ())
        best = max(literals for literals, _, _ in found)
        candidates = [(route, params) for literals, route, params in found if literals == best]
        for route, params in candidates:
            if route.method == method:
                return Match(route.handler, params, ())
        return Match(None, {}, tuple(sorted({route.method for route, _ in candidates})))

    def describe(self, name: Callable[[H], str]) -> list[tuple[str, str, str]]:
        """(method, pattern, handler name) of every route, for documentation and tests."""
        return [(route.method, route.pattern, name(route.handler)) for route in self.routes]


def _segments(path: str) -> tuple[str, ...]:
    return tuple(part for part in path.split("/") if part)


def _bind(pattern: tuple[str, ...], segments: tuple[str, ...]) -> dict[str, str] | None:
    if len(pattern) != len(segments):
        return None
    params: dict[str, str] = {}
    for expected, actual in zip(pattern, segments, strict=True):
        if expected.startswith(":"):
            params[expected[1:]] = actual
        elif expected != actual:
            return None
    return params
