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


def _dynamic_classes() -> list[type]:
    """The classes cloudpickle rebuilt or shipped by value in this process, newest first."""
    try:
        from cloudpickle import cloudpickle as internals

        tracked = list(internals._DYNAMIC_CLASS_TRACKER_BY_ID.values())
    except (ImportError, AttributeError):  # another cloudpickle: importable classes only
        return []
    tracked.reverse()
    return tracked


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
    for candidate in _dynamic_classes():
        if candidate.__qualname__ == qualname and candidate.__module__ == module:
            return candidate
    try:
        found = _imported(module, qualname)
    except (ImportError, AttributeError) as exc:
        raise UnknownClassError(module, qualname) from exc
    if not isinstance(found, type):
        raise UnknownClassError(module, qualname)
    return found


def needs_name_reference(cls: type) -> bool:
    """Whether pickle could not refer to ``cls`` by module and name in this process."""
    module = getattr(cls, "__module__", None)
    qualname = getattr(cls, "__qualname__", None)
    if not isinstance(module, str) or not isinstance(qualname, str):
        return False
    try:
        return _imported(module, qualname) is not cls
    except (ImportError, AttributeError):
        return True
