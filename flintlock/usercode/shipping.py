"""Which of the job's modules travel with it to the TaskManagers (Flink's user-code class
loading, DESIGN.md §2; ``classloader.resolve-order``).

A job graph reaches the TaskManagers cloudpickled. cloudpickle pickles a function of an
importable module *by reference* (module and name) and the TaskManager imports it, so the
module must be importable there. The job's own files travel through Spark (``job_files``) and
the TaskManager's loader (``loader``) resolves imports from them child-first or parent-first;
a function defined in them is pickled by reference. What is left are *job modules* the files
do not cover — loaded from a file that is neither in the standard library nor in an installed
package (site-/dist-packages), not matched by a parent-first pattern, and not importable under
their own name from the job's files (a test module a test runner imported, a module on a
path entry the job did not ship). Under ``child-first`` (the default) those are pickled *by
value*, so the TaskManager runs the code the driver has; under ``parent-first`` nothing is,
and the TaskManager imports them itself. ``__main__`` always goes by value (cloudpickle's
rule). ``classloader.parent-first-patterns.default`` and ``.additional`` are module-name
prefixes that always stay parent-first, whatever the resolve order (see "Patterns" below).

Patterns are Flink's: a plain prefix match on the dotted module name, where a module's name
is read with a dot after it, as a Java package is. So ``org.example.`` matches the package
``org.example`` and everything below it but not ``org.examplefoo``, and ``org.example`` (no
dot) matches all three, exactly as Flink's ``className.startsWith(pattern)`` does. The
standard library (``sys.stdlib_module_names`` and the interpreter's stdlib directories) and
flintlock itself are parent-first whatever the options say: no prefix list can name the
whole standard library, and the runtime that does the loading cannot be shipped by value.

``shipped_by_value(config, covered)`` registers those modules with cloudpickle for the
duration of a ``with`` block (the JobManager pickles the job graph inside it) and unregisters
them after, so nothing leaks into later pickling in the same driver.

Importing this module also installs ``code_filenames.keep_code_filenames()``: code shipped by
value keeps its file name and carries its source text, so TaskManager tracebacks point at the
job script's lines.

Called on the driver thread that submits a job; no state outlives the ``with`` block.
"""

from __future__ import annotations

import os
import sys
import sysconfig
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import ModuleType

import cloudpickle

from flintlock.common.config import Configuration
from flintlock.common.options import execution as execution_options
from flintlock.usercode.code_filenames import keep_code_filenames

ALWAYS_PARENT_FIRST = ("flintlock.",)
"""Parent-first whatever ``classloader.parent-first-patterns.default`` says."""
_INSTALLED = ("site-packages", "dist-packages")
keep_code_filenames()


def _library_roots() -> tuple[str, ...]:
    paths = sysconfig.get_paths()
    roots = {os.path.abspath(paths[key]) for key in ("stdlib", "platstdlib") if key in paths}
    return tuple(sorted(roots))


def matches_parent_first(name: str, patterns: tuple[str, ...]) -> bool:
    """Whether the module ``name`` matches one of ``patterns`` (plain prefix, as in Flink;
    the name is read as ``name.`` so that ``org.example.`` matches ``org.example``)."""
    dotted = name + "."
    return any(dotted.startswith(pattern) for pattern in patterns if pattern)


def is_job_module(module: ModuleType, parent_first: tuple[str, ...] = ()) -> bool:
    """Whether ``module`` is the job's own code (see the module docstring); ``parent_first``
    are the configured patterns."""
    name = getattr(module, "__name__", "")
    if name == "__main__" or not name:
        return False  # cloudpickle already ships __main__ by value
    if matches_parent_first(name, ALWAYS_PARENT_FIRST + parent_first):
        return False
    if name.split(".")[0] in sys.stdlib_module_names:
        return False
    origin = getattr(module, "__file__", None)
    if not origin:
        return False
    origin = os.path.abspath(origin)
    if any(part in _INSTALLED for part in origin.split(os.sep)):
        return False
    return not any(origin.startswith(root + os.sep) for root in _library_roots())


def parent_first_patterns(config: Configuration) -> tuple[str, ...]:
    """The configured default patterns, then the additional ones."""
    default: list[str] = config.get(execution_options.CLASSLOADER_PARENT_FIRST_PATTERNS_DEFAULT)
    additional: list[str] = config.get(execution_options.CLASSLOADER_PARENT_FIRST_PATTERNS)
    return tuple(default) + tuple(additional)


def job_modules(config: Configuration,
                covered: Callable[[ModuleType], bool] = lambda module: False,
                ) -> list[ModuleType]:
    """The modules ``shipped_by_value`` would register under ``config``: job modules that
    the job's files do not cover (``covered``: importable there under their own name)."""
    if config.get(execution_options.CLASSLOADER_RESOLVE_ORDER) == "parent-first":
        return []
    parent_first = parent_first_patterns(config)
    return [module for module in list(sys.modules.values())
            if module is not None and is_job_module(module, parent_first)
            and not covered(module)]


@contextmanager
def shipped_by_value(
    config: Configuration, covered: Callable[[ModuleType], bool] = lambda module: False,
) -> Iterator[list[ModuleType]]:
    """Registers the job modules for pickling by value inside the block (see above)."""
    registered = []
    already = set(cloudpickle.list_registry_pickle_by_value())
    for module in job_modules(config, covered):
        if module.__name__ in already:  # registered by the user: theirs to unregister
            continue
        cloudpickle.register_pickle_by_value(module)
        registered.append(module)
    try:
        yield registered
    finally:
        for module in registered:
            cloudpickle.unregister_pickle_by_value(module)
