"""Unpickling restored state, with the new names of classes that moved.

State values are pickled (``format``, ``operator``, the split enumerators' state): they are the
job's own Python objects, the same objects its records are made of, and a user's class is the
user's to keep importable. Some of flintlock's own classes end up in state too — a connector's
splits and enumerator snapshots (``NumberSequenceSplit``, ``EnumeratorSnapshot``), the pending
files of a file sink, the windows of a window operator (``TimeWindow``) — and pickle names
them by module and class name, so moving or renaming one would make every savepoint holding
it unreadable.

``MOVED`` maps the old ``(module, name)`` of such a class to its new place. The rule: whoever
moves or renames a flintlock class that can be in state adds an entry here (never remove one).
``tests/unit/state/test_state_pickles.py`` lists every flintlock class the savepoint fixtures'
state refers to (tests/fixtures/savepoints) and fails when one of them no longer resolves.

``loads`` first tries plain ``pickle.loads`` (C speed; nothing moved is the common case) and
only after a failed lookup of a module or class unpickles again through ``MOVED``.

Pure functions; safe from any thread.
"""

from __future__ import annotations

import io
import pickle
from collections.abc import Mapping
from typing import Any

MOVED: Mapping[tuple[str, str], tuple[str, str]] = {}
"""Old (module, class name) → where the class lives now."""


class _MovedClassUnpickler(pickle.Unpickler):
    def find_class(self, module: str, name: str) -> Any:
        return super().find_class(*MOVED.get((module, name), (module, name)))


def find_class(module: str, name: str) -> Any:
    """The object pickle would find for ``module.name`` in state, following ``MOVED``."""
    return _MovedClassUnpickler(io.BytesIO(b"")).find_class(module, name)


def loads(data: bytes | memoryview) -> Any:
    """``pickle.loads(data)``, falling back to ``MOVED`` when a module or class is missing."""
    try:
        return pickle.loads(data)
    except (AttributeError, ImportError):
        if not MOVED:
            raise
        return _MovedClassUnpickler(io.BytesIO(data)).load()
