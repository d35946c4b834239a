"""Class-data sharing for the embedded session's driver JVM: Spark's classes from an archive.

Most of the seconds a local SparkSession takes to start are the driver JVM loading, parsing
and verifying some 10,000 classes from Spark's ~280 jars. With Java's class-data sharing (CDS)
the JVM maps them, already parsed and verified, from an archive: on a 2-core machine a
SparkSession plus one barrier stage took 3.4-6.0 s with an archive against 9.2-10.3 s without
(three interleaved pairs; docs/benchmarks.md "Start-up"). Java 17 cannot create and refresh an
archive by itself (``-XX:+AutoCreateSharedArchive`` is Java 19+), so this module does, under
``<flintlock.spark.cache-dir>/cds``, for one archive per *key*: the JVM binary and the Spark
classpath (jar names, sizes and times), so a new JDK or Spark gets a new archive.

Life of an archive:

1. No archive for the key: the JVM gets ``-XX:ArchiveClassesAtExit=<key>.<pid>.part`` and logs
   its CDS steps to ``<key>.<pid>.log``; it writes the archive when it exits, after this
   Python process (seconds of CPU, once). ``<key>.lock``, created exclusively, keeps other
   processes from writing one meanwhile; it expires after ``CLAIM_TTL_S``.
2. A later start promotes the part: only when its log says "Written dynamic archive" (the JVM
   logs that after it wrote and closed the file) and the part is as long as the regions the
   log lists. ``os.replace`` makes it ``<key>-<size>.jsa`` at once, so no JVM ever maps a
   file that is still being written. A write that failed — a part still unfinished after
   ``CLAIM_TTL_S``, or no part at all once the writing process is gone and its JVM's log has
   been quiet for ``DUMP_QUIET_S`` — leaves ``<key>.failed``, and no process tries that key
   again for ``FAILED_TTL_S``: the writing run starts about 3 s slower (measured), which
   should not recur every ten minutes where the JVM cannot write an archive.
3. The JVM gets ``-XX:SharedArchiveFile`` only for an archive whose size is the one in its
   name: a truncated archive crashes Java 17 with SIGBUS (tried), so it is deleted instead.
   An archive the JVM does not accept (another JDK build, a changed classpath) it ignores
   itself (``-Xshare:auto``, CDS messages off) and starts as without one.

Invariant: the JVM is pointed only at complete files, and nothing here can make start-up fail:
any ``OSError`` means "no archive this time" (DEBUG log). Stateless; called on the thread that
builds the session; concurrent processes coordinate through the file system only.
"""

from __future__ import annotations

import enum
import hashlib
import logging
import os
import re
import shutil
import time
from collections.abc import Mapping
from dataclasses import dataclass

LOG = logging.getLogger(__name__)
CLAIM_TTL_S = 600.0
DUMP_QUIET_S = 60.0
FAILED_TTL_S = 24 * 3600.0
UNUSED_TTL_S = 30 * 24 * 3600.0
_WRITTEN = "Written dynamic archive"
_REGION = re.compile(r"Shared file region .*?([\d,]+) bytes, addr \S+ file offset 0x([0-9a-fA-F]+)")
_UNSAFE_PATH = re.compile(r"[\s\"':,=]")
_ENVIRONMENT = ("SPARK_CONF_DIR", "SPARK_DIST_CLASSPATH", "HADOOP_CONF_DIR", "YARN_CONF_DIR",
                "SPARK_PREPEND_CLASSES")


class ArchiveUse(enum.Enum):
    MAPPED = "mapped"  # the JVM maps an existing archive
    WRITING = "writing"  # the JVM writes one when it exits
    NONE = "none"  # neither: another process is writing one, or no usable cache directory


@dataclass(frozen=True, slots=True)
class ArchivePlan:
    """What the driver JVM is given, and why."""

    use: ArchiveUse
    java_options: tuple[str, ...] = ()
    path: str | None = None


NO_ARCHIVE = ArchivePlan(ArchiveUse.NONE)


def default_cache_dir(environ: Mapping[str, str] = os.environ) -> str:
    """``$XDG_CACHE_HOME/flintlock``, else ``~/.cache/flintlock``."""
    base = environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "flintlock")


def find_java(environ: Mapping[str, str] = os.environ) -> str | None:
    """The ``java`` Spark's launch scripts run: ``$JAVA_HOME/bin/java``, else the PATH's."""
    home = environ.get("JAVA_HOME")
    if home:
        return os.path.join(home, "bin", "java")
    return shutil.which("java")


def archive_key(java: str, spark_home: str, extra_class_path: str,
                environ: Mapping[str, str] = os.environ) -> str:
    """What an archive depends on, hashed: the JVM binary and the driver's classpath (Spark's
    jars, its defaults file, the environment and setting that add to the classpath)."""
    digest = hashlib.sha256()
    binary = os.path.realpath(java)
    java_home = os.path.dirname(os.path.dirname(binary))
    for path in (binary, os.path.join(java_home, "lib", "modules"),
                 os.path.join(spark_home, "conf", "spark-defaults.conf")):
        digest.update(_identity(path))
    jars = os.path.join(spark_home, "jars")
    for entry in sorted(os.scandir(jars), key=lambda e: e.name):
        digest.update(_identity(entry.path))
    for name in _ENVIRONMENT:
        digest.update(f"{name}={environ.get(name, '')}\0".encode())
    digest.update(f"extra={extra_class_path}\0".encode())
    return digest.hexdigest()[:20]


def _identity(path: str) -> bytes:
    try:
        stat = os.stat(path)
    except FileNotFoundError:
        return f"{path}:-\0".encode()
    return f"{path}:{stat.st_size}:{stat.st_mtime_ns}\0".encode()


def plan_archive(directory: str, key: str, pid: int | None = None,
                 now: float | None = None) -> ArchivePlan:
    """The JVM options for ``key`` in ``directory`` (see the module doc); never raises."""
    if _UNSAFE_PATH.search(directory):
        LOG.debug("no class-data sharing: the cache path %r needs quoting", directory)
        return NO_ARCHIVE
    now = time.time() if now is None else now
    try:
        os.makedirs(directory, exist_ok=True)
        _settle_writes(directory, key, now)
        archive = _complete_archive(directory, key)
        if archive is not None:
            os.utime(archive)
            return ArchivePlan(ArchiveUse.MAPPED, (
                f"-XX:SharedArchiveFile={archive}", "-Xshare:auto", "-Xlog:cds*=off"), archive)
        if not _claim(directory, key, now):
            return NO_ARCHIVE
        stem = os.path.join(directory, f"{key}.{os.getpid() if pid is None else pid}")
        return ArchivePlan(ArchiveUse.WRITING, (
            f"-XX:ArchiveClassesAtExit={stem}.part", "-Xlog:cds*=off",
            f"-Xlog:cds=info,cds+dynamic=info:file={stem}.log::filecount=0"), f"{stem}.part")
    except OSError as exc:
        LOG.debug("no class-data sharing: %s", exc)
        return NO_ARCHIVE


def _complete_archive(directory: str, key: str) -> str | None:
    """The archive of ``key`` whose size matches its name; a mismatching one is deleted."""
    for name in os.listdir(directory):
        match = re.fullmatch(rf"{key}-(\d+)\.jsa", name)
        if match is None:
            continue
        path = os.path.join(directory, name)
        if os.path.getsize(path) == int(match.group(1)):
            return path
        LOG.warning("deleting the truncated class-data archive %s", path)
        os.unlink(path)
    return None


def _claim(directory: str, key: str, now: float) -> bool:
    """Whether this process may write the archive of ``key`` (an expired claim is taken over;
    none after a recent failure)."""
    failed = os.path.join(directory, f"{key}.failed")
    if os.path.exists(failed):
        if now - os.path.getmtime(failed) < FAILED_TTL_S:
            return False
        _remove(failed)
    lock = os.path.join(directory, f"{key}.lock")
    for _ in range(2):
        try:
            os.close(os.open(lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644))
            return True
        except FileExistsError:
            if now - os.path.getmtime(lock) < CLAIM_TTL_S:
                return False
            os.unlink(lock)
    return False


def _settle_writes(directory: str, key: str, now: float) -> None:
    """Promotes the parts the JVM finished writing; records the writes that failed."""
    writers = {int(match.group(1)) for name in os.listdir(directory)
               if (match := re.fullmatch(rf"{key}\.(\d+)\.(?:log|part)", name))}
    for pid in writers:
        stem = os.path.join(directory, f"{key}.{pid}")
        try:  # another process may settle the same write meanwhile
            if os.path.exists(f"{stem}.part"):
                _settle_part(directory, key, stem, now)
            elif not _alive(pid) and now - os.path.getmtime(f"{stem}.log") > DUMP_QUIET_S:
                _failed(directory, key, stem, "its JVM ended without writing one")
        except FileNotFoundError:
            continue


def _settle_part(directory: str, key: str, stem: str, now: float) -> None:
    part = f"{stem}.part"
    size = os.path.getsize(part)
    if _finished(f"{stem}.log", size):
        if any(n.startswith(f"{key}-") for n in os.listdir(directory)):
            _remove(part)  # a second writer's: one archive per key is enough
        else:
            os.replace(part, os.path.join(directory, f"{key}-{size}.jsa"))
            LOG.debug("class-data archive %s-%d.jsa ready", key, size)
        _remove(f"{stem}.log", os.path.join(directory, f"{key}.lock"))
        _prune(directory, key, now)
    elif now - os.path.getmtime(part) > CLAIM_TTL_S:
        _failed(directory, key, stem, "its JVM's log does not show a complete archive")


def _failed(directory: str, key: str, stem: str, why: str) -> None:
    LOG.debug("no class-data archive from %s: %s", stem, why)
    with open(os.path.join(directory, f"{key}.failed"), "w", encoding="utf-8") as marker:
        marker.write(why + "\n")
    _remove(f"{stem}.part", f"{stem}.log", os.path.join(directory, f"{key}.lock"))


def _alive(pid: int) -> bool:
    if os.name != "posix":  # signal 0 would interrupt the process on Windows
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _finished(log: str, size: int) -> bool:
    """The JVM's log says the archive was written, and ``size`` covers every region."""
    try:
        with open(log, encoding="utf-8", errors="replace") as handle:
            text = handle.read()
    except FileNotFoundError:
        return False
    ends = [int(offset, 16) + int(length.replace(",", ""))
            for length, offset in _REGION.findall(text)]
    return _WRITTEN in text and bool(ends) and size >= max(ends)


def _prune(directory: str, key: str, now: float) -> None:
    """Deletes what has not been used for ``UNUSED_TTL_S``: other keys' archives (an old JDK
    or Spark) and whatever else they left."""
    for name in os.listdir(directory):
        path = os.path.join(directory, name)
        if name.startswith(f"{key}-") or not name.endswith((".jsa", ".log", ".part", ".failed")):
            continue
        if now - os.path.getmtime(path) > UNUSED_TTL_S:
            _remove(path)


def _remove(*paths: str) -> None:
    for path in paths:
        try:
            os.unlink(path)
        except FileNotFoundError:
            pass
