"""The job's Python dependencies: requirements installed and archives unpacked on every host
that runs its TaskManagers (PyFlink's ``set_python_requirements`` and ``add_python_archive``;
the options ``python.requirements`` and ``python.archives``).

Driver side, ``collect_dependencies(config)`` reads what the options name — the requirements
file, the files of its offline cache directory, each archive — into one ``PythonDependencies``
value that travels with every deployment (``DeployTasks.python_dependencies``). Missing files,
an archive of an unknown format or more than ``MAX_SHIPPED_BYTES`` in all are a
``PythonDependencyError`` at submission, before any TaskManager starts.

TaskManager side, ``prepare_environment(dependencies, ...)`` runs before the job graph is
unpickled (user code may import the packages at load time):

* the job's own files (``job_files``; they travel through Spark, not in the message): each is
  fetched with ``locate_file`` and unzipped once per host and content, like the archives
  below; with the installed requirements they are the roots of the job's ``JobCodeLoader``
  (``loader``), which a TaskManager alone in its process opens for the job's lifetime;
* requirements: ``pip install --target`` into a directory named after the content's
  digest under ``flintlock.python.dependencies-dir``, once per host: the first TaskManager
  installs under a file lock, writes a completion marker and renames the directory into
  place; the others
  (and later attempts and jobs with the same requirements) reuse it. With a cache directory
  pip runs offline (``--no-index --find-links``), as PyFlink does. The directory joins
  ``sys.path``. A failed install is a ``PythonRequirementsError`` carrying pip's output.
* archives (zip, tar, tar.gz/bz2/xz): unpacked the same way (by digest, under a lock) into
  ``<target dir>`` of a working directory for the job's archives. A TaskManager
  that owns its process (Spark runs each one in its own Python worker) makes that directory
  its working directory, so user code opens archived files by relative path as on PyFlink;
  TaskManagers sharing a process (the test launcher's threads) cannot, and say so if the job
  has archives. Members that would land outside the target directory (absolute paths,
  ``..``, links) are a ``PythonDependencyError``.

``PreparedEnvironment.close()`` closes the loader (the job's modules unloaded and, with
``classloader.check-leaked-classloader``, its code retired after a bounded wait for the job's
threads, which it returns if they outlive it), takes the directories off ``sys.path`` and
restores the working directory: a Spark Python worker may be reused for other work afterwards.

State: a ``PythonDependencies`` is an immutable value; a ``PreparedEnvironment`` belongs to
the TaskManager that prepared it (its deploying thread).
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import threading
import zipfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from flintlock.common.config import Configuration
from flintlock.common.errors import FlintlockError
from flintlock.common.options import execution as execution_options
from flintlock.common.options import python as python_options
from flintlock.usercode.job_files import JobFile, JobFiles
from flintlock.usercode.leaks import leftover_threads
from flintlock.usercode.loader import CodeRoot, JobCodeLoader
from flintlock.usercode.shipping import parent_first_patterns

MAX_SHIPPED_BYTES = 48 * 1024 * 1024
"""Requirements, cached packages and archives of one job together: they travel inside the
deployment message (the RPC frame limit is 64 MiB). Larger environments belong in the
cluster's image or Spark's ``spark.archives``."""

_ARCHIVE_SUFFIXES = (".zip", ".jar", ".whl", ".tar", ".tar.gz", ".tgz", ".tar.bz2", ".tbz2",
                     ".tar.xz", ".txz")
_COMPLETE = ".flintlock-complete"
LEFTOVER_THREAD_BUDGET_S = 5.0
"""How long a TaskManager alone in its process waits, after its tasks ended, for threads the
job started; those still alive then are reported and their process retired."""


class PythonDependencyError(FlintlockError):
    """A Python dependency of the job cannot be shipped or unpacked."""


class PythonRequirementsError(FlintlockError):
    """pip could not install the job's requirements; the message carries pip's output."""


@dataclass(frozen=True, slots=True)
class ShippedArchive:
    name: str
    """The archive's file name (its format is read from the suffix)."""
    target_dir: str
    """Where it is unpacked, relative to the job's working directory."""
    data: bytes


@dataclass(frozen=True, slots=True)
class PythonDependencies:
    requirements: bytes | None = None
    """The requirements file's content."""
    cached_packages: tuple[tuple[str, bytes], ...] = ()
    """(file name, content) of the requirements cache directory: installs go offline."""
    archives: tuple[ShippedArchive, ...] = ()
    requirements_digest: str = field(default="", compare=False)
    """Names the install directory: the same requirements and cache reuse one install."""
    archives_digest: str = field(default="", compare=False)
    """Names the unpacked archives' directory."""
    job_files: tuple[JobFile, ...] = ()
    """The job's own files (``job_files``): they travel through Spark, not in here."""

    @property
    def size(self) -> int:
        return (len(self.requirements or b"") + sum(len(d) for _, d in self.cached_packages)
                + sum(len(a.data) for a in self.archives))


# ---------------------------------------------------------------------------------- driver


def collect_dependencies(config: Configuration,
                         job_files: JobFiles | None = None) -> PythonDependencies | None:
    """What the job's options name, read from the submitting machine, with the job's files
    as ``job_files.pack`` made them; None if nothing."""
    requirements, cached = _collect_requirements(config.get(python_options.REQUIREMENTS))
    archives = tuple(_collect_archive(spec) for spec in config.get(python_options.ARCHIVES))
    files = job_files.files if job_files is not None else ()
    if requirements is None and not archives and not files:
        return None
    targets = [archive.target_dir for archive in archives]
    clashing = sorted({t for t in targets if targets.count(t) > 1})
    if clashing:
        raise PythonDependencyError(
            f"python.archives: two archives unpack into the same directory {clashing[0]!r}; "
            "give them different target directories (archive#target)")
    unsealed = PythonDependencies(requirements, cached, archives)
    if unsealed.size > MAX_SHIPPED_BYTES:
        raise PythonDependencyError(
            f"the job's Python dependencies are {unsealed.size / 2**20:.1f} MiB, more than the "
            f"{MAX_SHIPPED_BYTES // 2**20} MiB that travel with a deployment; install them in "
            "the cluster's Python environment or ship them with Spark (spark.archives)")
    requirements_digest = _digest([requirements or b"", *(
        part for name, data in cached for part in (name.encode(), data))])
    archives_digest = _digest([part for archive in archives for part in (
        archive.name.encode(), archive.target_dir.encode(), archive.data)])
    return PythonDependencies(requirements, cached, archives, requirements_digest,
                              archives_digest, files)


def _digest(parts: Iterable[bytes]) -> str:
    digest = hashlib.sha256()
    for part in parts:
        digest.update(len(part).to_bytes(8, "little"))
        digest.update(part)
    return digest.hexdigest()


def _collect_requirements(
    spec: str | None,
) -> tuple[bytes | None, tuple[tuple[str, bytes], ...]]:
    if not spec:
        return None, ()
    path, _, cache_dir = spec.partition("#")
    content = _read(path, "python.requirements: the requirements file")
    if not cache_dir:
        return content, ()
    if not os.path.isdir(cache_dir):
        raise PythonDependencyError(
            f"python.requirements: the cache directory {cache_dir} does not exist")
    cached = tuple(
        (name, _read(os.path.join(cache_dir, name), "python.requirements: a cached package"))
        for name in sorted(os.listdir(cache_dir))
        if os.path.isfile(os.path.join(cache_dir, name)))
    return content, cached


def _collect_archive(spec: str) -> ShippedArchive:
    path, _, target = spec.partition("#")
    name = os.path.basename(path)
    if not name.lower().endswith(_ARCHIVE_SUFFIXES):
        raise PythonDependencyError(
            f"python.archives: {path} is not a zip or tar archive "
            f"(known suffixes: {', '.join(_ARCHIVE_SUFFIXES)})")
    target = target or name
    if os.path.isabs(target) or ".." in target.replace("\\", "/").split("/") or target in ("", "."):
        raise PythonDependencyError(
            f"python.archives: the target directory {target!r} must be a relative path "
            "inside the working directory")
    return ShippedArchive(name, os.path.normpath(target), _read(path, "python.archives"))


def _read(path: str, what: str) -> bytes:
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except OSError as exc:
        raise PythonDependencyError(f"{what} {path} cannot be read: {exc}") from exc


# ----------------------------------------------------------------------------- TaskManager


class PreparedEnvironment:
    """The directories a TaskManager added to ``sys.path``, the working directory it left
    and, in a process of its own, the job's code loader (``loader``); ``close()`` undoes all
    (idempotent) and returns the job's threads that outlived it."""

    def __init__(self) -> None:
        self.paths: list[str] = []
        self.working_dir: str | None = None
        self._previous_cwd: str | None = None
        self.loader: JobCodeLoader | None = None
        self._threads_before: frozenset[threading.Thread] = frozenset()
        self._leftover_budget_s = 0.0

    def add_path(self, path: str) -> None:
        if path not in sys.path:
            sys.path.insert(0, path)
            self.paths.append(path)

    def change_directory(self, path: str) -> None:
        self._previous_cwd = os.getcwd()
        os.chdir(path)
        self.working_dir = path

    def load_code(self, loader: JobCodeLoader, leftover_budget_s: float) -> None:
        """Opens ``loader``; with a budget, ``close`` first waits that long for the threads
        started from now on and reports those still alive."""
        self._threads_before = frozenset(threading.enumerate())
        self._leftover_budget_s = leftover_budget_s
        loader.open()
        self.loader = loader

    def annotate(self, error: BaseException) -> None:
        """Where an import failing in ``error`` was searched (see ``loader``)."""
        if self.loader is not None:
            self.loader.annotate(error)

    def close(self) -> list[threading.Thread]:
        leftover: list[threading.Thread] = []
        if self.loader is not None:
            if self._leftover_budget_s > 0:
                leftover = leftover_threads(self._threads_before, self._leftover_budget_s)
            self.loader.close()
            self.loader = None
        for path in self.paths:
            with contextlib.suppress(ValueError):
                sys.path.remove(path)
        self.paths = []
        if self._previous_cwd is not None:
            with contextlib.suppress(OSError):
                os.chdir(self._previous_cwd)
            self._previous_cwd = None
        return leftover


def prepare_environment(
    deps: PythonDependencies | None, config: Configuration, owns_process: bool,
    job_id: str = "", locate_file: Callable[[str], str] | None = None,
) -> PreparedEnvironment:
    """Installs and unpacks ``deps`` on this host (once per content) and makes them
    importable; see the module docstring. ``locate_file`` finds a shipped job file on this
    host by its name (Spark's ``SparkFiles``)."""
    prepared = PreparedEnvironment()
    deps = deps or PythonDependencies()
    if deps.archives and not owns_process:
        raise PythonDependencyError(
            "python.archives: these TaskManagers share one process (the thread launcher), so "
            "none can make the archives' directory its working directory; run the job on "
            "Spark")
    root = config.get(python_options.DEPENDENCIES_DIR) or os.path.join(
        tempfile.gettempdir(), "flintlock-python-env")
    roots: list[CodeRoot] = []
    try:
        if deps.job_files and owns_process:
            if locate_file is None:
                raise PythonDependencyError(
                    "the job ships files (python.files, its directory) but this TaskManager "
                    "has no way to fetch them")
            os.makedirs(root, exist_ok=True)
            for shipped in deps.job_files:
                roots.append(CodeRoot(_unpack_job_file(shipped, locate_file, root),
                                      shipped.origin))
        if deps.requirements is not None:
            os.makedirs(root, exist_ok=True)
            timeout_s = config.get(python_options.INSTALL_TIMEOUT) / 1000.0
            site = _once(os.path.join(root, f"requirements-{deps.requirements_digest[:24]}"),
                         lambda into: _install(deps, into, timeout_s))
            if owns_process:
                roots.append(CodeRoot(site, "python.requirements"))
            else:
                prepared.add_path(site)
        if deps.archives:
            os.makedirs(root, exist_ok=True)
            work = _once(os.path.join(root, f"archives-{deps.archives_digest[:24]}"),
                         lambda into: _unpack_all(deps.archives, into))
            prepared.change_directory(work)
        if owns_process:
            check = config.get(execution_options.CLASSLOADER_CHECK_LEAKED)
            prepared.load_code(
                JobCodeLoader(job_id, roots,
                              config.get(execution_options.CLASSLOADER_RESOLVE_ORDER),
                              parent_first_patterns(config), check),
                LEFTOVER_THREAD_BUDGET_S if check else 0.0)
    except BaseException:
        prepared.close()
        raise
    return prepared


def _unpack_job_file(shipped: JobFile, locate_file: Callable[[str], str], root: str) -> str:
    """The directory ``shipped`` is unpacked in on this host (once per content)."""
    local = locate_file(shipped.name)
    return _once(os.path.join(root, f"files-{shipped.digest[:24]}"),
                 lambda into: _unzip(shipped.name, local, into))


def _once(final: str, build: Callable[[str], None]) -> str:
    """``final``, built by ``build(tmp_dir)`` the first time on this host; concurrent callers
    (other TaskManagers here) wait on a file lock and reuse it."""
    if os.path.exists(os.path.join(final, _COMPLETE)):
        return final
    with open(final + ".lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            if os.path.exists(os.path.join(final, _COMPLETE)):
                return final
            shutil.rmtree(final, ignore_errors=True)  # a half-built one from a crash
            staging = tempfile.mkdtemp(prefix=os.path.basename(final) + ".",
                                       dir=os.path.dirname(final))
            try:
                build(staging)
                open(os.path.join(staging, _COMPLETE), "w").close()
                os.rename(staging, final)
            except BaseException:
                shutil.rmtree(staging, ignore_errors=True)
                raise
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
    return final


def _install(deps: PythonDependencies, into: str, timeout_s: float) -> None:
    assert deps.requirements is not None
    work = tempfile.mkdtemp(prefix="flintlock-requirements-")
    try:
        requirements = os.path.join(work, "requirements.txt")
        with open(requirements, "wb") as handle:
            handle.write(deps.requirements)
        command = [sys.executable, "-m", "pip", "install", "--no-input",
                   "--disable-pip-version-check", "--no-warn-script-location",
                   "--target", into, "-r", requirements]
        if deps.cached_packages:
            cache = os.path.join(work, "cache")
            os.makedirs(cache)
            for name, data in deps.cached_packages:
                with open(os.path.join(cache, os.path.basename(name)), "wb") as handle:
                    handle.write(data)
            command += ["--no-index", "--find-links", cache]
        try:
            done = subprocess.run(command, capture_output=True, text=True, timeout=timeout_s,
                                  check=False)
        except subprocess.TimeoutExpired as exc:
            raise PythonRequirementsError(
                f"installing the job's requirements took longer than {timeout_s:.0f} s "
                "(flintlock.python.requirements.install-timeout)") from exc
        if done.returncode != 0:
            output = (done.stderr.strip() or done.stdout.strip())[-4000:]
            raise PythonRequirementsError(
                f"pip could not install the job's requirements (exit {done.returncode}):\n"
                f"{output}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _unpack_all(archives: tuple[ShippedArchive, ...], into: str) -> None:
    for archive in archives:
        target = os.path.join(into, archive.target_dir)
        os.makedirs(target, exist_ok=True)
        _unpack(archive, target)


def _unpack(archive: ShippedArchive, target: str) -> None:
    staged = os.path.join(os.path.dirname(target), "." + archive.name)
    with open(staged, "wb") as handle:
        handle.write(archive.data)
    try:
        if archive.name.lower().endswith((".zip", ".jar", ".whl")):
            _unzip(archive.name, staged, target)
        else:
            _untar(archive.name, staged, target)
    finally:
        os.unlink(staged)


def _inside(root: str, member: str, archive: str) -> str:
    path = os.path.realpath(os.path.join(root, member))
    if os.path.isabs(member) or not (path == os.path.realpath(root)
                                     or path.startswith(os.path.realpath(root) + os.sep)):
        raise PythonDependencyError(
            f"archive {archive}: member {member!r} would be unpacked outside its directory")
    return path


def _unzip(name: str, path: str, target: str) -> None:
    try:
        with zipfile.ZipFile(path) as archive:
            for member in archive.namelist():
                _inside(target, member, name)
            archive.extractall(target)
    except zipfile.BadZipFile as exc:
        raise PythonDependencyError(f"archive {name} is not a valid zip file: {exc}") from exc


def _untar(name: str, path: str, target: str) -> None:
    try:
        with tarfile.open(path) as archive:
            members = archive.getmembers()
            for member in members:
                _inside(target, member.name, name)
                if member.issym() or member.islnk() or member.isdev():
                    raise PythonDependencyError(
                        f"archive {name}: member {member.name!r} is a link or device; only "
                        "files and directories are unpacked")
            if hasattr(tarfile, "data_filter"):  # 3.11.4+: the stdlib's own safety net too
                archive.extractall(target, members=members, filter="data")
            else:
                archive.extractall(target, members=members)
    except tarfile.TarError as exc:
        raise PythonDependencyError(f"archive {name} is not a valid tar file: {exc}") from exc
