"""Finds what keeps a user function from being shipped to the TaskManagers.

User functions travel by cloudpickle. When pickling one fails, the bare pickle error ("cannot
pickle '_thread.lock' object") does not say which of the user's objects holds the lock.
``check_picklable`` pickles an object and, on failure, searches its members — instance
attributes, slots, closure variables, globals a function reads, default arguments, container
items — for the smallest one that still fails, and reports its path (``self.conn``,
``closure variable 'lock'``, ``item 2``).

The search is bounded (depth and breadth) so a huge object graph cannot stall job submission.
Runs on the user's thread while the job is built.
"""

from __future__ import annotations

import types
from collections.abc import Iterator
from typing import Any

import cloudpickle

from flintlock.datastream.errors import UnpicklableFunctionError

_MAX_DEPTH = 6
_MAX_CHILDREN = 200


def _pickle_error(obj: Any) -> BaseException | None:
    try:
        cloudpickle.dumps(obj)
    except Exception as exc:  # any failure while pickling counts as "not picklable"
        return exc
    return None


def check_picklable(obj: Any, operator: str, what: str) -> None:
    """Raise ``UnpicklableFunctionError`` naming ``what`` (e.g. "the function MyMap") and the
    failing member if ``obj`` cannot be cloudpickled."""
    error = _pickle_error(obj)
    if error is None:
        return
    path, culprit = _find(obj, 0)
    member = f"{path} ({type(culprit).__name__})" if path else ""
    raise UnpicklableFunctionError(
        operator, what, member, f"{type(error).__name__}: {error}") from error


def _find(obj: Any, depth: int) -> tuple[str, Any]:
    """The path to the deepest failing member of ``obj`` (which itself fails), and it."""
    if depth >= _MAX_DEPTH:
        return "", obj
    for label, child in _children(obj):
        if child is obj or _pickle_error(child) is None:
            continue
        sub_path, culprit = _find(child, depth + 1)
        return _join(label, sub_path), culprit
    return "", obj


def _join(label: str, sub_path: str) -> str:
    if not sub_path:
        return label
    return f"{label}{sub_path}" if sub_path.startswith("[") else f"{label}.{sub_path}"


def _children(obj: Any) -> Iterator[tuple[str, Any]]:
    count = 0
    for item in _raw_children(obj):
        count += 1
        if count > _MAX_CHILDREN:
            return
        yield item


def _raw_children(obj: Any) -> Iterator[tuple[str, Any]]:
    if isinstance(obj, types.MethodType):
        yield "self", obj.__self__
        yield from _raw_children(obj.__func__)
        return
    if isinstance(obj, types.FunctionType):
        yield from _function_children(obj)
        return
    if isinstance(obj, dict):
        for key, value in obj.items():
            yield f"[{key!r}]", value
        return
    if isinstance(obj, (list, tuple, set, frozenset)):
        for index, value in enumerate(obj):
            yield f"[{index}]", value
        return
    yield from _attribute_children(obj)


def _function_children(func: types.FunctionType) -> Iterator[tuple[str, Any]]:
    code = func.__code__
    for name, cell in zip(code.co_freevars, func.__closure__ or (), strict=False):
        try:
            yield f"closure variable {name!r}", cell.cell_contents
        except ValueError:  # an empty cell
            continue
    for name in code.co_names:
        if name in func.__globals__:
            value = func.__globals__[name]
            if not isinstance(value, types.ModuleType):
                yield f"global {name!r}", value
    for index, value in enumerate(func.__defaults__ or ()):
        yield f"default argument {index}", value


def _attribute_children(obj: Any) -> Iterator[tuple[str, Any]]:
    for name, value in getattr(obj, "__dict__", {}).items():
        yield name, value
    for klass in type(obj).__mro__:
        for name in getattr(klass, "__slots__", ()):
            if isinstance(name, str) and hasattr(obj, name) and name != "__dict__":
                yield name, getattr(obj, name)
