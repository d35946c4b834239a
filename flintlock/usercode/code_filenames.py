"""User functions keep their file names and source lines on the TaskManagers (issue 30).

cloudpickle rebuilds a function shipped by value (the job script's ``__main__``, a job module
``shipping`` registers, any lambda) from its code object, and its reducer replaces the code's
``co_filename`` by ``"<dynamic-code>"`` to make payloads independent of where the code was
defined. A traceback raised on a TaskManager then reads ``File "<dynamic-code>", line 7`` where
PyFlink shows ``File ".../job.py", line 7, in parse`` and the source line.

``keep_code_filenames()`` puts a reducer of its own in cloudpickle's dispatch table (once per
process; every ``cloudpickle.dumps`` in the driver goes through it): the code object keeps its
real ``co_filename``, and the code of a *user* source file (neither flintlock, nor the
standard library, nor an installed package) carries that file's text with it, once per
payload (pickle's memo shares one ``SourceText`` between all the code objects of a file). On
the TaskManager, unpickling a ``SourceText`` registers it with ``linecache``, so a traceback
shows the source line even where the script's path does not exist (a cluster's worker). The
payload stays deterministic for one file at one place.

Module state: the process-wide ``SourceText`` cache (keyed by path, size and mtime, so an edited
file is read again) behind a lock; the reducer runs on whichever thread pickles.
"""

from __future__ import annotations

import functools
import linecache
import os
import sysconfig
import threading
import types
from typing import Any

import cloudpickle.cloudpickle as _cloudpickle_impl

MAX_SOURCE_BYTES = 2 * 1024 * 1024
"""A larger file travels without its text (tracebacks still name the file and line)."""
_DYNAMIC = "<dynamic-code>"
_RUNTIME_PACKAGES = ("flintlock", "pyspark", "py4j", "cloudpickle")
_INSTALLED = ("site-packages", "dist-packages")
_lock = threading.Lock()
_sources: dict[tuple[str, int, int], SourceText] = {}
_installed = False
_original_reduce: Any = None


class SourceText:
    """A user source file's text; unpickling it registers the text with ``linecache``."""

    __slots__ = ("filename", "text")

    def __init__(self, filename: str, text: str) -> None:
        self.filename = filename
        self.text = text

    def __reduce__(self) -> tuple[Any, tuple[str, str]]:
        return register_source, (self.filename, self.text)


def register_source(filename: str, text: str) -> SourceText:
    """Makes ``linecache`` answer ``filename``'s lines from ``text`` (an entry without a
    modification time, which ``linecache.checkcache`` keeps)."""
    lines = text.splitlines(keepends=True)
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += "\n"
    linecache.cache[filename] = (len(text), None, lines, filename)
    return SourceText(filename, text)


def _library_roots() -> tuple[str, ...]:
    paths = sysconfig.get_paths()
    return tuple(sorted({os.path.abspath(paths[key]) + os.sep
                         for key in ("stdlib", "platstdlib") if key in paths}))


@functools.lru_cache(maxsize=1024)
def is_user_source(filename: str) -> bool:
    """Whether ``filename`` is a user's source file whose text should travel with its code."""
    if not filename or filename.startswith("<") or not filename.endswith(".py"):
        return False
    path = os.path.abspath(filename)
    parts = path.split(os.sep)
    if any(part in _INSTALLED for part in parts):
        return False
    if any(os.path.isfile(os.path.join(os.sep.join(parts[:i + 1]), "__init__.py"))
           and parts[i] in _RUNTIME_PACKAGES for i in range(len(parts) - 1)):
        return False
    return not path.startswith(_library_roots())


def source_of(filename: str) -> SourceText | None:
    """The cached ``SourceText`` of a user source file, or None (not one, unreadable, too
    large)."""
    if not is_user_source(filename):
        return None
    try:
        stat = os.stat(filename)
    except OSError:
        return None
    if stat.st_size > MAX_SOURCE_BYTES:
        return None
    key = (filename, stat.st_size, stat.st_mtime_ns)
    with _lock:
        cached = _sources.get(key)
    if cached is not None:
        return cached
    try:
        with open(filename, encoding="utf-8") as handle:
            text = handle.read()
    except (OSError, UnicodeDecodeError):
        return None
    with _lock:
        return _sources.setdefault(key, SourceText(filename, text))


def rebuild_code(source: SourceText | None, args: tuple[Any, ...]) -> types.CodeType:
    """The code object from ``types.CodeType``'s arguments (``source`` was registered with
    ``linecache`` when it was unpickled, before this call)."""
    return types.CodeType(*args)


def _reduce_code(code: types.CodeType) -> tuple[Any, ...]:
    constructor, args = _original_reduce(code)
    if constructor is not types.CodeType:  # a cloudpickle of another shape: leave it be
        return constructor, args
    kept = tuple(code.co_filename if isinstance(arg, str) and arg == _DYNAMIC else arg
                 for arg in args)
    return rebuild_code, (source_of(code.co_filename), kept)


def keep_code_filenames() -> None:
    """Installs the reducer (see the module doc); idempotent."""
    global _installed, _original_reduce
    with _lock:
        if _installed:
            return
        table = _cloudpickle_impl.Pickler._dispatch_table
        _original_reduce = table[types.CodeType]
        table[types.CodeType] = _reduce_code
        _installed = True
