"""The user's key selector as the runtime calls it: a field getter in C where it is one.

A key selector written ``def first_field(t): return t[0]`` or ``lambda r: r.word`` is, to the
interpreter, a Python frame per call around one subscript or attribute load; the runtime calls
it once a record in the keyed writer and again in the keyed operator (issue 31: 40-60 ns a call
on this machine, against about a third of that for ``operator.itemgetter``).

``plain_key_getter(function)`` recognises a plain function whose whole body is
``return <its one argument>[<int or str constant>]`` or ``return <its one argument>.<name>``,
or a tuple of two or more such items or of such attributes (``return (t[0], t[2])``), and a
method bound to an instance whose body is that of its one further argument (a
``KeySelector``'s ``get_key(self, value)``). It gives ``operator.itemgetter(constant, ...)`` or
``operator.attrgetter(name, ...)`` instead, which make the same ``PyObject_GetItem`` /
``PyObject_GetAttr`` calls in the same order, so the key and any exception (``IndexError``,
``KeyError``, ``TypeError``, ``AttributeError``, the object's own ``__getitem__`` /
``__getattr__`` errors) are the same; what differs is that no Python frame of the user's
function appears in a traceback or to a profiler. Anything else — closures over the index,
more arguments, other bytecode (a one-element tuple, items mixed with attributes, ``self``
read in a method), callables that are not plain functions or methods — is returned
unchanged, so a selector is never changed in meaning. The recognition reads the function's
bytecode once, when an operator or writer is set up (``docs/decisions.md``, "Key selectors as
field getters").

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
    record = _record_argument(key_of)
    if record is None:
        return key_of
    code, argument = record
    steps = [i for i in dis.get_instructions(code) if i.opname not in _SKIPPED]
    if not steps or steps[-1].opname != "RETURN_VALUE":
        return key_of
    body, size = steps[:-1], 1
    if body and body[-1].opname == "BUILD_TUPLE":  # (t[0], t[1]): itemgetter(0, 1)'s tuple
        body, size = body[:-1], body[-1].arg or 0
        if size < 2:
            return key_of
    fields = _fields(body, argument)
    if fields is None or len(fields) != size:
        return key_of
    kinds = {kind for kind, _ in fields}
    names = [name for _, name in fields]
    if kinds == {"item"}:
        return operator.itemgetter(*names)
    if kinds == {"attr"}:
        return operator.attrgetter(*names)
    return key_of  # a tuple of items and attributes: no one getter makes it


def _record_argument(key_of: Any) -> tuple[types.CodeType, str] | None:
    """The code and the record argument's name of a plain function of one argument, or of a
    method bound to an instance whose one further argument is the record; else None."""
    function, index = key_of, 0
    if type(key_of) is types.MethodType:  # KeySelector.get_key(self, value) on an instance
        function, index = key_of.__func__, 1
    if type(function) is not types.FunctionType:
        return None
    code = function.__code__
    if (code.co_argcount != index + 1 or code.co_kwonlyargcount
            or code.co_flags & _NOT_PLAIN or code.co_freevars or code.co_cellvars):
        return None
    return code, code.co_varnames[index]


def _fields(body: list[dis.Instruction], argument: str) -> list[tuple[str, Any]] | None:
    """[("item", constant) | ("attr", name), ...] for a body of ``argument[constant]`` and
    ``argument.name`` loads (int or str constants), else None."""
    fields: list[tuple[str, Any]] = []
    position = 0
    while position < len(body):
        load = body[position]
        if load.opname != "LOAD_FAST" or load.argval != argument or position + 1 >= len(body):
            return None
        step = body[position + 1]
        if (step.opname == "LOAD_CONST" and type(step.argval) in (int, str)
                and position + 2 < len(body) and body[position + 2].opname == "BINARY_SUBSCR"):
            fields.append(("item", step.argval))
            position += 3
        elif step.opname == "LOAD_ATTR" and type(step.argval) is str:
            fields.append(("attr", step.argval))
            position += 2
        else:
            return None
    return fields or None
