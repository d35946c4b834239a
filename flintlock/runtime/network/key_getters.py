"""The user's key selector as the runtime calls it: a field getter in C where it is one.

A key selector written ``def first_field(t): return t[0]`` or ``lambda r: r.word`` is, to the
interpreter, a Python frame per call around one subscript or attribute load; the runtime calls
it once a record in the keyed writer and again in the keyed operator (issue 31: 40-60 ns a call
on this machine, against about a third of that for ``operator.itemgetter``).
``plain_key_getter(function)`` recognises a plain function whose whole body is
``return <its one argument>[<int or str constant>]`` or ``return <its one argument>.<name>``,
and gives ``operator.itemgetter(constant)`` or ``operator.attrgetter(name)`` instead: both
make the same ``PyObject_GetItem`` / ``PyObject_GetAttr`` call the function's one bytecode does,
so the key, and any exception (``IndexError``, ``KeyError``, ``TypeError``,
``AttributeError``, the object's own ``__getitem__`` / ``__getattr__`` errors), are the same;
what differs is that no Python frame of the user's function appears in a traceback or to a
profiler. Anything else — closures over the index, defaults, more arguments, other
bytecode, bound methods, callables that are not plain functions — is returned unchanged, so a
selector is never changed in meaning. The recognition reads the function's bytecode once,
when an operator or writer is set up (``docs/decisions.md``, "Key selectors as field getters").

Pure, no I/O.
"""

from __future__ import annotations

import dis
import inspect
import operator
import types
from collections.abc import Callable
from typing import Any

_SKIPPED = frozenset({"RESUME", "NOP", "CACHE", "EXTENDED_ARG"})
_NOT_PLAIN = (inspect.CO_VARARGS | inspect.CO_VARKEYWORDS | inspect.CO_GENERATOR
              | inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR
              | inspect.CO_ITERABLE_COROUTINE)


def plain_key_getter(key_of: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """``operator.itemgetter``/``attrgetter`` equal to ``key_of`` where it is a plain field
    getter (see the module docstring); else ``key_of`` itself."""
    field = _field_of(key_of)
    if field is None:
        return key_of
    kind, name = field
    if kind == "item":
        return operator.itemgetter(name)
    return operator.attrgetter(name)


def _field_of(key_of: Any) -> tuple[str, Any] | None:
    """("item", constant) or ("attr", name) for a plain field getter, else None."""
    if type(key_of) is not types.FunctionType:
        return None
    code = key_of.__code__
    if (code.co_argcount != 1 or code.co_kwonlyargcount or code.co_flags & _NOT_PLAIN
            or code.co_freevars or code.co_cellvars):
        return None
    steps = [i for i in dis.get_instructions(code) if i.opname not in _SKIPPED]
    names = [i.opname for i in steps]
    argument = code.co_varnames[0]
    if not steps or steps[0].opname != "LOAD_FAST" or steps[0].argval != argument:
        return None
    if names == ["LOAD_FAST", "LOAD_CONST", "BINARY_SUBSCR", "RETURN_VALUE"]:
        constant = steps[1].argval
        return ("item", constant) if type(constant) in (int, str) else None
    if names == ["LOAD_FAST", "LOAD_ATTR", "RETURN_VALUE"] and type(steps[1].argval) is str:
        return "attr", steps[1].argval
    return None
