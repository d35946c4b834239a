"""Finding a class by module and qualified name, the job script's own classes included.

State and the canonical key bytes (``canonical_keys``) name a class by its module and
``__qualname__``, as pickle does. A class defined in the job script (``__main__``) or in a job
module shipped by value (``usercode.shipping``) cannot be imported in a TaskManager: cloudpickle
rebuilt it there when the job graph arrived, and ``sys.modules['__main__']`` of a Spark worker
is Spark's own module. ``find_class`` therefore looks first among the classes cloudpickle
rebuilt (or shipped) in this process — its registry of dynamic classes, newest first, which is
where the job's functions got theirs — and only then imports. So a restored value or key is an
instance of the very class the job's code uses in this process (a dataclass's ``__eq__``
compares classes by identity), also after a restart in another process or a new submission of
the same script.

The registry is cloudpickle's (``_DYNAMIC_CLASS_TRACKER_BY_ID``, weak); with another
cloudpickle that lacks it only importable classes are found. Classes of a job that ended are
dropped from it (``usercode.leaks``); two jobs running at once in one process with classes of
the same name would resolve to the newer one's.

``needs_name_reference(cls)``: whether plain pickle cannot refer to ``cls`` (it would fail, or
find another object under that name), so the state pickler names it for ``find_class``.

Pure lookups, safe from any thread.
"""

from __future__ import annotations

import importlib
import sys
import weakref
from collections.abc import Mapping
from typing import Any

from flintlock.common.errors import FlintlockError


class UnknownClassError(FlintlockError, LookupError):
    """State (or a key) names a class this process does not have."""

    def __init__(self, module: str, qualname: str) -> None:
        super().__init__(module, qualname)
        self.module = module
        self.qualname = qualname

    def __str__(self) -> str:
        return (f"state refers to the class {self.module}.{self.qualname}, which this process "
                "cannot find: it is neither importable nor one of the job's classes shipped "
                "by value (is it still defined in the job script or its modules?)")


def _registry() -> Mapping[str, type]:
    """cloudpickle's classes rebuilt or shipped by value in this process, by tracker id, oldest
    first (empty with a cloudpickle that has no such registry: importable classes only)."""
    try:
        from cloudpickle import cloudpickle as internals

        registry: Mapping[str, type] = internals._DYNAMIC_CLASS_TRACKER_BY_ID
    except (ImportError, AttributeError):
        return {}
    return registry


_FOUND: dict[tuple[str, str], tuple[weakref.ref[type], str | None, object]] = {}
"""(module, qualname) → (the class found, its tracker id or None, the registry's newest entry
then): reused while nothing was added to the registry since and it still holds the class (a
restore unpickles a value per read, each naming its class). Not the registry's size: the
registry is weak, so a class added while another one died leaves the size as it was."""


def _newest(registry: Mapping[str, type]) -> object:
    """A mark that changes whenever a class is added to the registry: its newest tracker id."""
    entries: Any = getattr(registry, "data", registry)  # a WeakValueDictionary's dict, in order
    return next(reversed(entries), None)


def _imported(module: str, qualname: str) -> Any:
    target: Any = sys.modules.get(module)
    if target is None:
        target = importlib.import_module(module)
    for part in qualname.split("."):
        target = getattr(target, part)
    return target


def find_class(module: str, qualname: str) -> type:
    """The class named ``module.qualname`` in this process (see the module docstring);
    ``UnknownClassError`` if there is none."""
    registry = _registry()
    newest = _newest(registry)
    known = _FOUND.get((module, qualname))
    if known is not None:
        found, tracker_id, known_newest = known[0](), known[1], known[2]
        if found is not None and known_newest == newest and (
                tracker_id is None or registry.get(tracker_id) is found):
            return found
    found, tracker_id = _search(registry, module, qualname)
    _FOUND[(module, qualname)] = (weakref.ref(found), tracker_id, newest)
    return found


def _search(registry: Mapping[str, type], module: str, qualname: str) -> tuple[type, str | None]:
    for tracker_id, candidate in reversed(list(registry.items())):  # newest first
        if candidate.__qualname__ == qualname and candidate.__module__ == module:
            return candidate, tracker_id
    try:
        found = _imported(module, qualname)
    except (ImportError, AttributeError) as exc:
        raise UnknownClassError(module, qualname) from exc
    if not isinstance(found, type):
        raise UnknownClassError(module, qualname)
    return found, None


_HEAP_TYPE = 1 << 9
"""``Py_TPFLAGS_HEAPTYPE``: a class made by a ``class`` statement (or ``type()``), not one of the
interpreter's static types, which pickle and cloudpickle reduce their own ways."""


def needs_name_reference(cls: type) -> bool:
    """Whether ``cls`` is a class of Python code that pickle could not refer to by module and
    name in this process (the job script's, rebuilt by cloudpickle)."""
    if not cls.__flags__ & _HEAP_TYPE:
        return False
    module = getattr(cls, "__module__", None)
    qualname = getattr(cls, "__qualname__", None)
    if not isinstance(module, str) or not isinstance(qualname, str):
        return False
    try:
        return _imported(module, qualname) is not cls
    except (ImportError, AttributeError):
        return True
