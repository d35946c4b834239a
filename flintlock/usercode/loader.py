"""Resolving a job's imports on a TaskManager: child-first or parent-first, as Flink's user-code
class loader does (``classloader.resolve-order``, ``classloader.parent-first-patterns.*``).

A *root* is a directory holding job code on this host: an unpacked entry of the job's files
(``job_files``) or the job's installed requirements (``python_env``). ``JobCodeLoader.open``
makes the roots importable through the ordinary import system for as long as the job runs in
this process, in one of two orders:

* ``child-first`` (the default): the roots go to the front of ``sys.path``, and a module the
  roots provide shadows an installed module of the same top-level name *for every import in
  the process*: one that is already loaded is set aside for the job's lifetime (so there is one
  copy of each module, the job's), one that is not loaded yet is found in the roots first.
* ``parent-first``: the roots go to the end of ``sys.path``: what the process can import
  already wins, the job's modules are the fallback.

Under either order, a module matched by a parent-first pattern — the standard library,
flintlock itself, and ``classloader.parent-first-patterns.default`` / ``.additional`` — is
searched in the process's own path first and in the roots only if it is not found there, as
Flink's ``ChildFirstClassLoader`` does for its always-parent-first patterns. A finder at the
front of ``sys.meta_path`` does that; everything else is the import system's own work, so
``__file__``, ``importlib.resources`` and relative data files behave as on the user's machine.

``close()`` undoes all of it: the job's modules leave ``sys.modules`` (and their parent
packages' attributes), the set-aside modules come back, the roots leave ``sys.path`` and the
importer caches, and — with ``classloader.check-leaked-classloader`` — the job's functions are
retired (``leaks``), so code of the ended job that runs again fails with a clear error.

``annotate(error)`` adds to an ``ImportError`` (anywhere in a failure's chain) where the
module was searched, in order, under which resolve order and for which job.

Thread ownership: ``open`` and ``close`` run on the TaskManager's main thread, before the job
graph is unpickled and after its tasks ended; the finder is called by any thread that imports
and only reads state fixed at ``open``.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import logging
import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from types import ModuleType

from flintlock.usercode.leaks import retire_code
from flintlock.usercode.shipping import ALWAYS_PARENT_FIRST, matches_parent_first

log = logging.getLogger(__name__)
_EXTENSION_SUFFIXES = tuple(importlib.machinery.EXTENSION_SUFFIXES)


@dataclass(frozen=True, slots=True)
class CodeRoot:
    """A directory of job code on this host and what it came from (for messages)."""

    path: str
    origin: str


class JobCodeLoader:
    """The job's import resolution in this process, between ``open`` and ``close``."""

    def __init__(self, job_id: str, roots: Sequence[CodeRoot], resolve_order: str,
                 parent_first: tuple[str, ...], check_leaked: bool) -> None:
        self.job_id = job_id
        self.roots = tuple(CodeRoot(os.path.realpath(r.path), r.origin) for r in roots)
        self.resolve_order = resolve_order
        self._patterns = ALWAYS_PARENT_FIRST + tuple(parent_first)
        self._check_leaked = check_leaked
        self._finder = _ParentFirstFinder(self)
        self._set_aside: dict[str, ModuleType] = {}
        self._open = False

    @property
    def child_first(self) -> bool:
        return self.resolve_order != "parent-first"

    # -- resolution ----------------------------------------------------------------------

    def is_parent_first(self, name: str) -> bool:
        """The standard library, flintlock and the configured patterns."""
        top = name.partition(".")[0]
        return (top in sys.stdlib_module_names or top in sys.builtin_module_names
                or matches_parent_first(name, self._patterns))

    def owns(self, path: str) -> bool:
        """Whether ``path`` is one of the roots or inside one."""
        return self.is_job_code(os.path.realpath(path)) if path else False

    def is_job_code(self, filename: str) -> bool:
        """Whether ``filename`` (a code object's, so already as imported: no links to
        resolve) lies in a root."""
        return any(filename == root.path or filename.startswith(root.path + os.sep)
                   for root in self.roots)

    def provided_names(self) -> set[str]:
        """Top-level module names the roots provide (modules, packages, extensions)."""
        names: set[str] = set()
        for root in self.roots:
            try:
                entries = os.listdir(root.path)
            except OSError:
                continue
            for entry in entries:
                full = os.path.join(root.path, entry)
                if entry.endswith(".py"):
                    names.add(entry[:-3])
                elif entry.endswith(_EXTENSION_SUFFIXES):
                    names.add(entry.split(".")[0])
                elif os.path.isdir(full) and entry.isidentifier():
                    names.add(entry)
        return {name for name in names if name.isidentifier()}

    # -- lifecycle -----------------------------------------------------------------------

    def open(self) -> None:
        """Makes the roots importable in the configured order (see the module doc)."""
        if self._open:
            return
        paths = [root.path for root in self.roots if root.path not in sys.path]
        if self.child_first:
            shadowing = {n for n in self.provided_names() if not self.is_parent_first(n)}
            for name in list(sys.modules):
                if name.partition(".")[0] in shadowing and not self.is_parent_first(name):
                    module = sys.modules.pop(name)
                    if module is not None:
                        self._set_aside[name] = module
            sys.path[:0] = paths
        else:
            sys.path.extend(paths)
        sys.meta_path.insert(0, self._finder)
        self._forget_finders()
        self._open = True
        if self._set_aside:
            log.info("job %s: child-first resolution sets aside %d loaded module(s) that "
                     "its files shadow: %s", self.job_id, len(self._set_aside),
                     sorted(self._set_aside)[:20])

    def close(self) -> int:
        """Unloads the job's modules and restores the process's (see the module doc);
        returns how many functions were retired. Idempotent."""
        if not self._open:
            return 0
        self._open = False
        if self._finder in sys.meta_path:
            sys.meta_path.remove(self._finder)
        sys.path[:] = [p for p in sys.path if not (p and self.owns(p))]
        self._forget_finders()
        for name, module in list(sys.modules.items()):
            if module is not None and self._loaded_from_roots(module):
                del sys.modules[name]
                parent, _, child = name.rpartition(".")
                if parent and getattr(sys.modules.get(parent), child, None) is module:
                    delattr(sys.modules[parent], child)
        for name, module in self._set_aside.items():
            sys.modules.setdefault(name, module)
        self._set_aside = {}
        if not self._check_leaked:
            return 0
        return retire_code(self.is_job_code, f"job {self.job_id}")

    def _forget_finders(self) -> None:
        """Drops the import system's cached finders of the roots (a reused worker may hold
        them from an earlier job). Deliberately not ``importlib.invalidate_caches()``: that
        re-reads the directory of every zip on the path (PySpark's own zips: about 0.1 s)."""
        for key in [k for k in sys.path_importer_cache if k and self.owns(k)]:
            del sys.path_importer_cache[key]

    def _loaded_from_roots(self, module: ModuleType) -> bool:
        origin = getattr(module, "__file__", None)
        if isinstance(origin, str):
            return self.owns(origin)
        portions = list(getattr(module, "__path__", None) or ())
        return bool(portions) and all(isinstance(p, str) and self.owns(p) for p in portions)

    # -- import errors -------------------------------------------------------------------

    def search_order(self, name: str) -> list[tuple[str, str]]:
        """(directory, what it is) in the order an import of ``name`` searches them."""
        parent, _, _ = name.rpartition(".")
        package = sys.modules.get(parent) if parent else None
        if package is not None and getattr(package, "__path__", None) is not None:
            return [(p, f"package {parent}") for p in package.__path__]
        jobs = [(root.path, root.origin) for root in self.roots]
        own = [(p or os.getcwd(), "the TaskManager's Python path") for p in sys.path
               if not (p and self.owns(p))]
        if self.child_first and not self.is_parent_first(name):
            return jobs + own
        return own + jobs

    def explain(self, name: str) -> str:
        why = ("; parent-first: it matches a parent-first pattern"
               if self.child_first and self.is_parent_first(name) else "")
        lines = [f"flintlock: job {self.job_id} looked for {name!r} "
                 f"(classloader.resolve-order: {self.resolve_order}{why}) in, in order:"]
        lines += [f"  {i}. {path}  [{what}]"
                  for i, (path, what) in enumerate(self.search_order(name), 1)]
        if not self.roots:
            lines.append("  (the job shipped no files: give its modules with "
                         "env.add_python_file or python.files, see docs/usercode.md)")
        return "\n".join(lines)

    def annotate(self, error: BaseException) -> None:
        """Adds ``explain`` to every ``ImportError`` in ``error``'s chain (once each)."""
        seen: set[int] = set()
        current: BaseException | None = error
        while current is not None and id(current) not in seen:
            seen.add(id(current))
            if isinstance(current, ImportError) and current.name:
                notes = getattr(current, "__notes__", [])
                if not any(n.startswith("flintlock: job ") for n in notes):
                    current.add_note(self.explain(current.name))
            current = current.__cause__ or current.__context__


class _ParentFirstFinder(importlib.abc.MetaPathFinder):
    """First on ``sys.meta_path``: a parent-first module is looked up in the process's own
    path (without the roots) before anything else; other names are left to the import
    system."""

    def __init__(self, loader: JobCodeLoader) -> None:
        self._loader = loader

    def find_spec(self, fullname: str, path: Sequence[str] | None = None,
                  target: ModuleType | None = None) -> importlib.machinery.ModuleSpec | None:
        loader = self._loader
        if not loader.is_parent_first(fullname):
            return None
        for importer in (importlib.machinery.BuiltinImporter,
                         importlib.machinery.FrozenImporter):
            spec = importer.find_spec(fullname, path)
            if spec is not None:
                return spec
        search = [p for p in (sys.path if path is None else path)
                  if not (p and loader.owns(p))]
        return importlib.machinery.PathFinder.find_spec(fullname, search, target)

    def invalidate_caches(self) -> None:
        return None
