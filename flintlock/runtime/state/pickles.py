"""Pickling state, and unpickling restored state with the new names of classes that moved.

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

``dumps`` pickles a state value. The job's own classes travel to the TaskManagers by value
(defined in the job script, ``__main__``, or in a module shipped by value): plain pickle
cannot name them there ("attribute lookup ... on __main__ failed"). ``dumps`` tries plain
pickle first (C speed, the common case) and otherwise pickles with ``_StatePickler``, which
writes such a class as a call of ``job_classes.find_class(module, qualname)``: on restore —
in this process, another, or a later run of the script — the value becomes an instance of the
class the job's code has there, never a copy of an old definition (a dataclass key compares
its class by identity). Other objects pickle cannot name (a lambda inside a value) go by value,
as cloudpickle ships them. A value's type that needed the fallback once goes straight to it.
``find_class`` is named in such state: it must never move (or gets a ``MOVED`` entry).
A value nothing can pickle is a ``StatePicklingError`` naming its type and the cause.

Pure functions; safe from any thread.
"""

from __future__ import annotations

import io
import pickle
from collections.abc import Mapping
from typing import Any

import cloudpickle

from flintlock.common.errors import FlintlockError
from flintlock.common.job_classes import find_class as find_job_class
from flintlock.common.job_classes import needs_name_reference

PROTOCOL = 5
_plain_dumps = pickle.dumps

MOVED: Mapping[tuple[str, str], tuple[str, str]] = {
    # issue 29: the state handles moved below checkpoint/ (state/ no longer imports it)
    **{("flintlock.runtime.checkpoint.handles", name): ("flintlock.runtime.state.handles", name)
       for name in ("StreamStateHandle", "ByteStateHandle", "CorruptStateError")},
}
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


class StatePicklingError(FlintlockError, TypeError):
    """A value put into state cannot be pickled (so no checkpoint could hold it)."""

    def __init__(self, type_name: str, cause: str) -> None:
        super().__init__(type_name, cause)
        self.type_name = type_name
        self.cause = cause

    def __str__(self) -> str:
        return f"a state value of type {self.type_name} cannot be pickled: {self.cause}"


class _NamingPickler(pickle.Pickler):
    """Plain pickle, except that a class pickle cannot name is named for ``find_job_class``."""

    def reducer_override(self, obj: Any) -> Any:
        if isinstance(obj, type) and needs_name_reference(obj):
            return find_job_class, (obj.__module__, obj.__qualname__)
        return NotImplemented


class _StatePickler(cloudpickle.Pickler):  # type: ignore[misc]
    """cloudpickle's pickler (functions of the job by value), except that a class pickle
    cannot name is named for ``find_job_class`` instead of being shipped by value."""

    def reducer_override(self, obj: Any) -> Any:
        if isinstance(obj, type) and needs_name_reference(obj):
            return find_job_class, (obj.__module__, obj.__qualname__)
        return super().reducer_override(obj)


_NEEDS_STATE_PICKLER: set[int] = set()
"""``id``s of the types of values plain pickle could not pickle. An id of a type that is gone
may come back for another type: that type then takes the slower pickler, which pickles
everything plain pickle does. Bounded by ``_MAX_REMEMBERED``."""
_MAX_REMEMBERED = 4096


def _pickle_by_name(value: Any) -> bytes:
    """``_NamingPickler`` (C speed but for the classes), else ``_StatePickler``."""
    out = io.BytesIO()
    try:
        _NamingPickler(out, protocol=PROTOCOL).dump(value)
        return out.getvalue()
    except (pickle.PicklingError, AttributeError, TypeError):
        out = io.BytesIO()
    try:
        _StatePickler(out, protocol=PROTOCOL).dump(value)
    except (pickle.PicklingError, AttributeError, TypeError, ValueError) as exc:
        raise StatePicklingError(type(value).__qualname__, str(exc)) from exc
    return out.getvalue()


def dumps(value: Any) -> bytes:
    """The pickle of a state value (see the module docstring)."""
    kind = id(type(value))
    if kind not in _NEEDS_STATE_PICKLER:
        try:
            return _plain_dumps(value, PROTOCOL)
        except (pickle.PicklingError, AttributeError, TypeError):
            if len(_NEEDS_STATE_PICKLER) >= _MAX_REMEMBERED:
                _NEEDS_STATE_PICKLER.clear()
            _NEEDS_STATE_PICKLER.add(kind)
    return _pickle_by_name(value)
