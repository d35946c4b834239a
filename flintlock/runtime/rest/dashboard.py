"""The web dashboard's static files, served by the REST endpoint next to the API.

``GET /`` is the page, ``GET /web/<file>`` its script and style sheet: three files shipped in
the wheel (``flintlock/runtime/rest/web/``), read once at import, no front-end dependency,
nothing fetched from elsewhere (the Content-Security-Policy allows this origin only).

These are the only paths served without the bearer token, because they hold no data: the
page asks for the token (or takes it once from the URL's fragment ``#token=…``, which browsers
never send to a server), keeps it in the tab's ``sessionStorage`` and sends it with each API
request, so everything the page shows comes through the API's own check — also its job
control (cancel, savepoint, stop with a savepoint), which calls the API's authenticated
actions with the same header: a request without the token is refused before anything
happens, and since the token never travels in a cookie, no other site can make the browser
send it (no cross-site request forgery).

``GET /web/mode.json`` says where the page is: ``{"mode": "live"}`` on a job's endpoint,
``{"mode": "history"}`` on the history server (``history_server``: read-only, no actions).

Pure lookups; safe on any thread (the HTTP loop answers an unauthenticated request itself).
"""

from __future__ import annotations

import json
from importlib import resources
from typing import Final

_TYPES: Final = {
    "html": "text/html; charset=utf-8",
    "js": "text/javascript; charset=utf-8",
    "css": "text/css; charset=utf-8",
}
_HEADERS: Final = (
    ("Content-Security-Policy",
     "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'"),
    ("X-Content-Type-Options", "nosniff"),
    ("Referrer-Policy", "no-referrer"),
    ("Cache-Control", "no-cache"),
)
_FILES: Final = ("index.html", "dashboard.js", "dashboard.css")


def _load() -> dict[str, tuple[bytes, str]]:
    web = resources.files("flintlock.runtime.rest") / "web"
    served: dict[str, tuple[bytes, str]] = {}
    for name in _FILES:
        body = (web / name).read_bytes()
        content_type = _TYPES[name.rsplit(".", 1)[1]]
        path = "/" if name == "index.html" else f"/web/{name}"
        served[path] = (body, content_type)
    return served


_SERVED: Final = _load()


LIVE_MODE: Final = "live"
HISTORY_MODE: Final = "history"
_MODES: Final = {mode: (json.dumps({"mode": mode}).encode(), "application/json")
                 for mode in (LIVE_MODE, HISTORY_MODE)}


def static_file(method: str, path: str, mode: str = LIVE_MODE
                ) -> tuple[bytes, str, tuple[tuple[str, str], ...]] | None:
    """(body, content type, headers) of a dashboard file, or None when ``GET path`` is not
    one."""
    found = _MODES[mode] if path == "/web/mode.json" else _SERVED.get(path)
    if found is None or method != "GET":
        return None
    body, content_type = found
    return body, content_type, _HEADERS
