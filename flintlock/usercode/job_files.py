"""The job's own files, packed on the driver to travel to every TaskManager host (Flink's
user jar; PyFlink's ``add_python_file`` / ``python.files``).

What travels, in this order (the order of the TaskManager's search path, ``loader``):

1. the job's own directory: where ``__main__`` was loaded from (the script's directory for
   ``python job.py``, the directory above its package for ``python -m pkg.job``), unless
   ``flintlock.python.ship-job-directory`` is false or ``__main__`` lives in the Python
   installation (a test runner, an interactive session);
2. each entry of ``python.files`` (``env.add_python_file`` appends to it): a directory (its
   content becomes importable, modules at its top level import by their own name), a single
   file (importable by its name if it is a module), a ``.zip``/``.egg`` (importable as on
   ``sys.path``) or a ``.whl`` (its packages).

Each is one zip file named after its content digest (``flintlock-<digest>-<name>.zip``),
written once into a staging directory kept across driver processes; a source whose files keep
their sizes and modification times is not read again (``_content_digest``). The launcher
hands the staged files to Spark (``SparkContext.addFile``), which serves them to every
executor; the TaskManager finds them with ``SparkFiles`` and unpacks each once per host
(``python_env``). Non-Python files go
along, so modules read their data files next to them (``importlib.resources``, or a path built
from ``__file__``).

Packing a directory leaves out what is never the job's: ``__pycache__``, hidden directories
(``.git``, ``.venv``, tool caches: a name starting with a dot), ``node_modules`` and virtual
environments (a directory holding ``pyvenv.cfg``). A job directory
above ``MAX_JOB_DIRECTORY_FILES`` files or ``MAX_JOB_FILES_BYTES`` in all is refused with a
``JobFilesError`` that says how to ship less. A zip, egg or wheel travels as it is.

``JobFiles.covers(module)`` tells the driver's pickling (``shipping``) whether a module of that
name is importable from the job's files: such modules are pickled by reference and the
TaskManager imports them by its resolve order (whichever copy the driver had loaded); others
that are not installed go by value.

Called on the driver thread that submits a job; the staging directory outlives the driver
process (Spark reads the files when executors fetch them; later drivers reuse them).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import sys
import tempfile
import threading
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from types import ModuleType

from flintlock.common.config import Configuration
from flintlock.common.errors import FlintlockError
from flintlock.common.options import python as python_options

MAX_JOB_DIRECTORY_FILES = 20_000
MAX_JOB_FILES_BYTES = 512 * 1024 * 1024
_SKIPPED_DIRECTORIES = frozenset({
    "__pycache__", ".git", ".hg", ".svn", ".mypy_cache", ".pytest_cache", ".ruff_cache",
    ".tox", ".nox", ".ipynb_checkpoints", "node_modules", ".eggs", ".hypothesis",
})
_ZIPS = (".zip", ".egg", ".whl")


class JobFilesError(FlintlockError):
    """A file given to ``add_python_file`` / ``python.files`` cannot be shipped."""


@dataclass(frozen=True, slots=True)
class JobFile:
    """One packed entry of the job's files."""

    name: str
    """The shipped file's name (``flintlock-<digest>-<base>.zip``): how the TaskManager asks
    Spark for it, and the name of the directory it is unpacked into."""
    digest: str
    origin: str
    """What the user gave, for messages: ``add_python_file('/home/me/lib')``."""
    staged_path: str
    """Where the driver wrote it (read by Spark's file server)."""
    size: int


@dataclass(frozen=True, slots=True)
class _Source:
    path: str
    origin: str
    kind: str  # "directory", "file" or "zip"


@dataclass(frozen=True, slots=True)
class JobFiles:
    """The job's files, packed (``pack``); ``covers`` answers for the driver's pickling."""

    files: tuple[JobFile, ...]
    sources: tuple[_Source, ...]

    def covers(self, module: ModuleType) -> bool:
        """Whether a module named as ``module`` can be imported from the job's files: then the
        TaskManager imports it from there (whichever copy the driver loaded)."""
        name = getattr(module, "__name__", "")
        if not name or name == "__main__":
            return False
        return any(_provides(source, name) for source in self.sources)


def _provides(source: _Source, name: str) -> bool:
    """Whether ``source`` holds the module or package ``name``."""
    relative = name.replace(".", "/")
    candidates = [relative + ".py", relative + "/__init__.py"]
    if source.kind == "file":
        return "." not in name and os.path.basename(source.path) == candidates[0]
    if source.kind == "zip":
        try:
            with zipfile.ZipFile(source.path) as archive:
                names = set(archive.namelist())
        except (OSError, zipfile.BadZipFile):
            return False
        return any(c in names for c in candidates)
    return any(os.path.isfile(os.path.join(source.path, *c.split("/"))) for c in candidates)


def job_directory(config: Configuration) -> str | None:
    """The directory ``__main__`` came from, if it is the user's (see the module doc)."""
    if not config.get(python_options.SHIP_JOB_DIRECTORY):
        return None
    main = sys.modules.get("__main__")
    origin = getattr(main, "__file__", None)
    if not isinstance(origin, str) or not origin:
        return None
    directory = os.path.dirname(os.path.abspath(origin))
    spec = getattr(main, "__spec__", None)
    depth = (getattr(spec, "name", "") or "").count(".")
    if os.path.basename(origin).startswith("__main__."):
        depth += 1  # python -m pkg runs pkg/__main__.py: the package sits one level up
    for _ in range(depth):
        directory = os.path.dirname(directory)
    if _inside_installation(directory):
        return None
    return directory


def _inside_installation(path: str) -> bool:
    roots = {os.path.abspath(p) for p in (sys.prefix, sys.base_prefix, sys.exec_prefix)}
    flintlock_root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    return (any(path == root or path.startswith(root + os.sep) for root in roots)
            or path == flintlock_root or path.startswith(flintlock_root + os.sep)
            or any(part in ("site-packages", "dist-packages") for part in path.split(os.sep)))


def sources(config: Configuration) -> tuple[_Source, ...]:
    """What the job's files are, before packing (see the module doc)."""
    found: list[_Source] = []
    directory = job_directory(config)
    if directory is not None:
        found.append(_Source(directory, f"the job's directory {directory}", "directory"))
    for entry in python_files(config):
        path = os.path.abspath(entry)
        origin = f"python.files entry {entry}"
        if os.path.isdir(path):
            found.append(_Source(path, origin, "directory"))
        elif os.path.isfile(path):
            found.append(_Source(path, origin, "zip" if path.lower().endswith(_ZIPS)
                                 else "file"))
        else:
            raise JobFilesError(f"python.files: {entry} does not exist")
    unique: dict[tuple[str, str], _Source] = {}
    for source in found:
        unique.setdefault((source.path, source.kind), source)
    return tuple(unique.values())


def python_files(config: Configuration) -> list[str]:
    """``python.files``: comma-separated as in PyFlink (semicolons are accepted too)."""
    raw = config.get(python_options.FILES) or ""
    return [part.strip() for part in raw.replace(";", ",").split(",") if part.strip()]


def pack(config: Configuration) -> JobFiles:
    """Packs the job's files into the staging directory (once per content)."""
    found = sources(config)
    files = tuple(_pack_one(source) for source in found)
    total = sum(f.size for f in files)
    if total > MAX_JOB_FILES_BYTES:
        raise JobFilesError(
            f"the job's files are {total / 2**20:.0f} MiB packed, more than "
            f"{MAX_JOB_FILES_BYTES // 2**20} MiB; ship large data through storage the "
            "TaskManagers read, or install libraries in the cluster's environment")
    return JobFiles(files, found)


def _pack_one(source: _Source) -> JobFile:
    if source.kind == "zip":
        _check_zip(source.path)
        members = [("", source.path)]
    else:
        members = sorted(_members(source))
    hexdigest = _content_digest(members)
    base = os.path.basename(source.path.rstrip(os.sep)) or "root"
    name = f"flintlock-{hexdigest[:20]}-{_safe(base)}.zip"
    staged = os.path.join(_staging_directory(), name)
    if not os.path.exists(staged):
        partial = staged + f".{os.getpid()}.{threading.get_ident()}.part"
        if source.kind == "zip":
            shutil.copyfile(source.path, partial)
        else:
            with zipfile.ZipFile(partial, "w", zipfile.ZIP_DEFLATED,
                                 compresslevel=1) as archive:
                for arcname, path in members:
                    archive.write(path, arcname)
        os.replace(partial, staged)
    return JobFile(name, hexdigest, source.origin, staged, os.path.getsize(staged))


def _content_digest(members: list[tuple[str, str]]) -> str:
    """SHA-256 of the members' names and bytes. Remembered under a fingerprint of their names,
    sizes and modification times, so a driver started again on unchanged files reads none of
    them (a file changed in place keeps neither its size and time to the nanosecond)."""
    fingerprint = hashlib.sha256()
    for arcname, path in members:
        stat = os.stat(path)
        fingerprint.update(f"{arcname}\0{path}\0{stat.st_size}\0{stat.st_mtime_ns}\0".encode())
    remembered = os.path.join(_staging_directory(), "fingerprints", fingerprint.hexdigest())
    try:
        with open(remembered, encoding="ascii") as handle:
            known = handle.read().strip()
        if len(known) == 64:
            return known
    except OSError:
        pass
    digest = hashlib.sha256()
    for arcname, path in members:
        digest.update(arcname.encode() + b"\0")
        with open(path, "rb") as handle:
            while block := handle.read(1 << 20):
                digest.update(block)
        digest.update(b"\0")
    hexdigest = digest.hexdigest()
    os.makedirs(os.path.dirname(remembered), exist_ok=True)
    partial = f"{remembered}.{os.getpid()}.{threading.get_ident()}.part"
    with open(partial, "w", encoding="ascii") as handle:
        handle.write(hexdigest)
    os.replace(partial, remembered)
    return hexdigest


def _safe(base: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in base)[:60]


def _members(source: _Source) -> Iterator[tuple[str, str]]:
    """(name inside the packed zip, file on disk)."""
    if source.kind == "file":
        yield os.path.basename(source.path), source.path
        return
    count = 0
    size = 0
    for directory, subdirs, names in os.walk(source.path):
        subdirs[:] = sorted(d for d in subdirs if d not in _SKIPPED_DIRECTORIES
                            and not d.startswith(".")
                            and not os.path.exists(os.path.join(directory, d, "pyvenv.cfg"))
                            and not os.path.islink(os.path.join(directory, d)))
        for name in names:
            if name.endswith((".pyc", ".pyo")) or name == "pyvenv.cfg":
                continue
            path = os.path.join(directory, name)
            if not os.path.isfile(path):
                continue
            count += 1
            size += os.path.getsize(path)
            if count > MAX_JOB_DIRECTORY_FILES or size > MAX_JOB_FILES_BYTES:
                raise JobFilesError(
                    f"{source.origin} holds more than {MAX_JOB_DIRECTORY_FILES} files or "
                    f"{MAX_JOB_FILES_BYTES // 2**20} MiB; move the job into a directory of "
                    "its own, or set flintlock.python.ship-job-directory: false and give "
                    "its modules with env.add_python_file")
            yield os.path.relpath(path, source.path), path


def _check_zip(path: str) -> None:
    try:
        with zipfile.ZipFile(path) as archive:
            bad = archive.testzip()
    except zipfile.BadZipFile as exc:
        raise JobFilesError(f"python.files: {path} is not a valid zip file: {exc}") from exc
    if bad is not None:
        raise JobFilesError(f"python.files: {path} is damaged (member {bad})")


_staging: str | None = None
_staging_lock = threading.Lock()


def _staging_directory() -> str:
    """Packed files by content and the fingerprints of packed sources, kept across driver
    processes of this user (``flintlock-job-files-<uid>`` in the temporary directory)."""
    global _staging
    with _staging_lock:
        if _staging is None:
            path = os.path.join(tempfile.gettempdir(), f"flintlock-job-files-{os.getuid()}")
            os.makedirs(path, mode=0o700, exist_ok=True)
            if os.stat(path).st_uid != os.getuid():
                raise JobFilesError(f"{path} belongs to another user; set TMPDIR elsewhere")
            _staging = path
        return _staging
