"""What is left of a job in a process after its TaskManager ended, and making sure it cannot run
(Flink's ``classloader.check-leaked-classloader``).

Flink wraps a job's class loader so that, once the job is closed, loading a class through it
throws instead of handing out code of a job that is gone. Python has no class loader to close:
an ended job's functions stay callable as long as something references them — a thread the
job started and never stopped, a callback it registered with a library, a cached object. A
Spark Python worker is reused by the next task, so that code would run inside the next job.

``retire_code(is_job_code, description)`` makes every function of the ended job raise
``LeakedUserCodeError`` when called: each function object whose code came from the job's files
(``is_job_code``: the loader's roots) or was shipped by value (rebuilt by cloudpickle, its
globals a dictionary of its own rather than a loaded module's) gets a replacement code object
that raises, named and placed as the original so tracebacks point at it. A frame already
running keeps running until it calls another function of the job. Classes rebuilt by value
are also dropped from cloudpickle's registry, so a later job in the process that ships the
same class rebuilds it instead of getting the retired one.

``leftover_threads(before, budget_s)`` names the threads started since ``before`` that are
still alive after a bounded join: the caller reports them and retires the process.

Runs on the TaskManager's main thread after its tasks ended; nothing here is shared.
"""

from __future__ import annotations

import gc
import os
import sys
import threading
import time
import types
from collections.abc import Callable, Collection

from flintlock.common.errors import FlintlockError

_MESSAGE = "\0flintlock-retired-code\0"
_RUNTIME = frozenset({"flintlock", "pyspark", "py4j", "cloudpickle"})
"""Code of these is never the job's, wherever it was loaded from."""


class LeakedUserCodeError(FlintlockError):
    """Code of a job whose TaskManager has ended was called (a thread or callback of that job
    outlived it); see ``classloader.check-leaked-classloader``."""


def leftover_threads(before: Collection[threading.Thread],
                     budget_s: float) -> list[threading.Thread]:
    """The threads started since ``before`` that are alive after joining them for at most
    ``budget_s`` in all."""
    deadline = time.monotonic() + budget_s
    started = [t for t in threading.enumerate()
               if t not in before and t is not threading.current_thread()]
    for thread in started:
        thread.join(max(0.0, deadline - time.monotonic()))
    return [t for t in started if t.is_alive()]


def retire_code(is_job_code: Callable[[str], bool], description: str) -> int:
    """Replaces the code of every function of the ended job (see the module doc); returns
    how many were retired. ``description`` names the job in the error message."""
    retired = 0
    retired_ids: set[int] = set()
    for obj in gc.get_objects():
        if type(obj) is not types.FunctionType:
            continue
        code = obj.__code__
        if _MESSAGE in code.co_consts:
            continue
        if not (is_job_code(code.co_filename) or _shipped_by_value(obj)):
            continue
        message = (f"{obj.__qualname__} ({code.co_filename}, line {code.co_firstlineno}) "
                   f"belongs to {description}, whose TaskManager has ended; a thread or "
                   "callback of that job outlived it. Stop the job's threads in close() "
                   "(classloader.check-leaked-classloader)")
        try:
            obj.__code__ = _raising_code(code, message)
        except (ValueError, TypeError):
            continue
        retired += 1
        retired_ids.add(id(obj))
    _forget_rebuilt_classes(retired_ids)
    return retired


def _shipped_by_value(function: types.FunctionType) -> bool:
    """Rebuilt by cloudpickle: globals of its own, naming a file that is not installed."""
    namespace = function.__globals__
    name = namespace.get("__name__", "")
    if not isinstance(name, str) or name.partition(".")[0] in _RUNTIME:
        return False
    module = sys.modules.get(name)
    if module is not None and getattr(module, "__dict__", None) is namespace:
        return False
    origin = namespace.get("__file__")
    if not isinstance(origin, str) or not origin:
        return False
    origin = os.path.abspath(origin)
    installed = {os.path.abspath(p) for p in (sys.prefix, sys.base_prefix, sys.exec_prefix)}
    if any(origin.startswith(root + os.sep) for root in installed):
        return False
    flintlock_root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    return not origin.startswith(flintlock_root + os.sep)


_TEMPLATES: dict[int, types.CodeType] = {}


def _template(free: int) -> types.CodeType:
    """A code object with ``free`` free variables that raises ``LeakedUserCodeError``."""
    template = _TEMPLATES.get(free)
    if template is None:
        names = [f"_free{i}" for i in range(free)]
        lines = ["def _outer():"]
        lines += [f"    {name} = None" for name in names]
        lines += ["    def _retired(*args, **kwargs):",
                  "        raise __import__('flintlock.usercode.leaks', fromlist=['_'])"
                  f".LeakedUserCodeError({_MESSAGE!r})"]
        lines += [f"        {name}" for name in names]
        lines += ["    return _retired"]
        namespace: dict[str, object] = {}
        exec(compile("\n".join(lines), "<retired>", "exec"), namespace)
        outer = namespace["_outer"]
        assert isinstance(outer, types.FunctionType)
        template = outer().__code__
        _TEMPLATES[free] = template
    return template


def _raising_code(original: types.CodeType, message: str) -> types.CodeType:
    template = _template(len(original.co_freevars))
    consts = (*(message if c == _MESSAGE else c for c in template.co_consts), _MESSAGE)
    return template.replace(
        co_consts=consts, co_name=original.co_name, co_qualname=original.co_qualname,
        co_filename=original.co_filename, co_firstlineno=original.co_firstlineno,
        co_freevars=original.co_freevars)


def _forget_rebuilt_classes(retired: set[int]) -> None:
    """Drops classes with a retired method from cloudpickle's registry of rebuilt classes
    (otherwise the next unpickling of the same class in this process reuses the retired
    one)."""
    try:
        from cloudpickle import cloudpickle as internals
        by_id = internals._DYNAMIC_CLASS_TRACKER_BY_ID
        by_class = internals._DYNAMIC_CLASS_TRACKER_BY_CLASS
        lock = internals._DYNAMIC_CLASS_TRACKER_LOCK
    except (ImportError, AttributeError):  # another cloudpickle: nothing to forget
        return
    with lock:
        for tracker_id, cls in list(by_id.items()):
            methods = [getattr(v, "__func__", v) for v in vars(cls).values()]
            if any(id(m) in retired for m in methods):
                by_id.pop(tracker_id, None)
                by_class.pop(cls, None)
