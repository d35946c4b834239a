"""The class-data archive of the embedded session's driver JVM, without a Spark session."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from flintlock.common.config import Configuration
from flintlock.spark import class_data
from flintlock.spark.class_data import (
    CLAIM_TTL_S,
    DUMP_QUIET_S,
    FAILED_TTL_S,
    ArchiveUse,
    archive_key,
    plan_archive,
)
from flintlock.spark.session import driver_java_options

KEY = "k" * 20
GONE = 99_999_999  # above any pid_max: no such process
NOW = 1_000_000.0
LOG_OF_A_WRITTEN_ARCHIVE = (  # the lines Java 17 writes, shortened
    "[14.2s][info][cds] Shared file region (rw )  0: 3000 bytes, addr 0x800bc7000 "
    "file offset 0x00001000 crc 0x1\n"
    "[14.3s][info][cds] Shared file region (ro )  1: 2000 bytes, addr 0x803601000 "
    "file offset 0x00002000 crc 0x2\n"
    "[14.4s][info][cds,dynamic] Written dynamic archive 0x800bc7000 - 0x8078c3d58 "
    "[984 bytes header, 9000 bytes total]\n"
)
COMPLETE_SIZE = 0x2000 + 2000


def write_part(directory: Path, pid: int, size: int, log: str | None) -> Path:
    part = directory / f"{KEY}.{pid}.part"
    part.write_bytes(b"\0" * size)
    if log is not None:
        (directory / f"{KEY}.{pid}.log").write_text(log)
    return part


def test_without_an_archive_one_process_writes_it_and_the_others_wait(tmp_path: Path):
    first = plan_archive(str(tmp_path), KEY, pid=11, now=NOW)
    assert first.use is ArchiveUse.WRITING
    assert f"-XX:ArchiveClassesAtExit={tmp_path}/{KEY}.11.part" in first.java_options
    assert any(o.startswith("-Xlog:cds=info") and f"file={tmp_path}/{KEY}.11.log" in o
               for o in first.java_options)
    assert plan_archive(str(tmp_path), KEY, pid=12, now=NOW).use is ArchiveUse.NONE


def test_a_part_the_jvm_finished_is_promoted_and_mapped(tmp_path: Path):
    assert plan_archive(str(tmp_path), KEY, pid=11, now=NOW).use is ArchiveUse.WRITING
    write_part(tmp_path, 11, COMPLETE_SIZE, LOG_OF_A_WRITTEN_ARCHIVE)
    plan = plan_archive(str(tmp_path), KEY, pid=12, now=NOW)
    archive = tmp_path / f"{KEY}-{COMPLETE_SIZE}.jsa"
    assert plan.use is ArchiveUse.MAPPED and plan.path == str(archive)
    assert f"-XX:SharedArchiveFile={archive}" in plan.java_options
    assert sorted(p.name for p in tmp_path.iterdir()) == [archive.name]  # lock and log gone


@pytest.mark.parametrize("size, log", [
    (COMPLETE_SIZE, LOG_OF_A_WRITTEN_ARCHIVE.replace("Written", "Writing")),  # still writing
    (COMPLETE_SIZE - 1, LOG_OF_A_WRITTEN_ARCHIVE),  # shorter than its last region
    (COMPLETE_SIZE, "no region lines\nWritten dynamic archive\n"),  # a log it cannot check
    (COMPLETE_SIZE, None),  # no log at all
])
def test_a_part_that_may_be_incomplete_is_never_mapped(tmp_path: Path, size, log):
    assert plan_archive(str(tmp_path), KEY, pid=11, now=NOW).use is ArchiveUse.WRITING
    part = write_part(tmp_path, 11, size, log)
    assert plan_archive(str(tmp_path), KEY, pid=12, now=NOW).use is ArchiveUse.NONE
    assert part.exists()
    later = os.path.getmtime(part) + CLAIM_TTL_S + 1  # the writing JVM is long gone
    assert plan_archive(str(tmp_path), KEY, pid=13, now=later).use is ArchiveUse.NONE
    assert not part.exists() and (tmp_path / f"{KEY}.failed").exists()
    retry = plan_archive(str(tmp_path), KEY, pid=14, now=later + FAILED_TTL_S)
    assert retry.use is ArchiveUse.WRITING


def test_a_jvm_that_ended_without_writing_stops_further_attempts_for_a_while(tmp_path: Path):
    assert plan_archive(str(tmp_path), KEY, pid=GONE, now=NOW).use is ArchiveUse.WRITING
    log = tmp_path / f"{KEY}.{GONE}.log"
    log.write_text("[0.1s][info][cds] Opened archive classes.jsa.\n")
    quiet = os.path.getmtime(log) + DUMP_QUIET_S + 1
    assert plan_archive(str(tmp_path), KEY, pid=12, now=quiet).use is ArchiveUse.NONE
    assert not log.exists() and (tmp_path / f"{KEY}.failed").exists()
    assert plan_archive(str(tmp_path), KEY, pid=13, now=quiet + 3600).use is ArchiveUse.NONE


def test_the_log_of_a_process_still_running_is_left_alone(tmp_path: Path):
    assert plan_archive(str(tmp_path), KEY, pid=os.getpid(), now=NOW).use is ArchiveUse.WRITING
    log = tmp_path / f"{KEY}.{os.getpid()}.log"
    log.write_text("[0.1s][info][cds] Opened archive classes.jsa.\n")
    later = os.path.getmtime(log) + DUMP_QUIET_S + 1
    assert plan_archive(str(tmp_path), KEY, pid=12, now=later).use is ArchiveUse.NONE
    assert log.exists() and not (tmp_path / f"{KEY}.failed").exists()


def test_a_truncated_archive_is_deleted_not_mapped(tmp_path: Path):
    truncated = tmp_path / f"{KEY}-{COMPLETE_SIZE}.jsa"
    truncated.write_bytes(b"\0" * 100)
    plan = plan_archive(str(tmp_path), KEY, pid=11, now=NOW)
    assert plan.use is ArchiveUse.WRITING and not truncated.exists()


def test_a_second_finished_part_is_dropped_when_an_archive_exists(tmp_path: Path):
    write_part(tmp_path, 11, COMPLETE_SIZE, LOG_OF_A_WRITTEN_ARCHIVE)
    write_part(tmp_path, 12, COMPLETE_SIZE + 4096, LOG_OF_A_WRITTEN_ARCHIVE)
    assert plan_archive(str(tmp_path), KEY, pid=13, now=NOW).use is ArchiveUse.MAPPED
    assert len(list(tmp_path.glob("*.jsa"))) == 1 and not list(tmp_path.glob("*.part"))


def test_archives_of_other_keys_unused_for_a_month_are_pruned(tmp_path: Path):
    old = tmp_path / f"{'o' * 20}-5.jsa"
    old.write_bytes(b"12345")
    os.utime(old, (NOW - class_data.UNUSED_TTL_S - 1,) * 2)
    recent = tmp_path / f"{'r' * 20}-5.jsa"
    recent.write_bytes(b"12345")
    os.utime(recent, (NOW,) * 2)
    write_part(tmp_path, 11, COMPLETE_SIZE, LOG_OF_A_WRITTEN_ARCHIVE)
    assert plan_archive(str(tmp_path), KEY, pid=12, now=NOW).use is ArchiveUse.MAPPED
    assert recent.exists() and not old.exists()


def test_no_archive_where_the_path_would_need_quoting_or_cannot_be_created(tmp_path: Path):
    assert plan_archive(str(tmp_path / "with space"), KEY).use is ArchiveUse.NONE
    blocker = tmp_path / "file"
    blocker.write_text("")
    assert plan_archive(str(blocker / "cds"), KEY).use is ArchiveUse.NONE


def test_the_key_follows_the_jvm_and_sparks_jars(tmp_path: Path):
    java_home = tmp_path / "jdk"
    (java_home / "bin").mkdir(parents=True)
    (java_home / "bin" / "java").write_text("a")
    jars = tmp_path / "spark" / "jars"
    jars.mkdir(parents=True)
    (jars / "spark-core.jar").write_text("1")
    java, spark_home = str(java_home / "bin" / "java"), str(tmp_path / "spark")
    before = archive_key(java, spark_home, "", {})
    assert archive_key(java, spark_home, "", {}) == before
    assert archive_key(java, spark_home, "/extra.jar", {}) != before
    assert archive_key(java, spark_home, "", {"SPARK_DIST_CLASSPATH": "/x"}) != before
    (jars / "spark-core.jar").write_text("22")
    assert archive_key(java, spark_home, "", {}) != before


def test_the_users_java_options_come_after_flintlocks():
    config = Configuration({"flintlock.spark.class-data-sharing": False,
                            "spark.driver.extraJavaOptions": "-XX:TieredStopAtLevel=4"})
    assert driver_java_options(config) == "-XX:TieredStopAtLevel=1 -XX:TieredStopAtLevel=4"


def test_the_cache_dir_setting_holds_the_archive(tmp_path: Path):
    if class_data.find_java() is None:
        pytest.skip("no java")
    options = driver_java_options(Configuration({"flintlock.spark.cache-dir": str(tmp_path)}))
    assert f"-XX:ArchiveClassesAtExit={tmp_path}/cds/" in options


@pytest.mark.skipif(shutil.which("java") is None, reason="no java")
@pytest.mark.parametrize("content", [b"", b"not an archive" * 1000])
def test_the_jvm_starts_without_an_archive_it_cannot_use(tmp_path: Path, content: bytes):
    """What plan_archive relies on for stale archives (a truncated one it never hands over)."""
    archive = tmp_path / "stale.jsa"
    archive.write_bytes(content)
    done = subprocess.run(["java", f"-XX:SharedArchiveFile={archive}", "-Xshare:auto",
                           "-Xlog:cds*=off", "-version"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "cds" not in done.stdout.lower()


@pytest.mark.skipif(shutil.which("java") is None, reason="no java")
def test_the_jvm_writes_an_archive_that_the_next_start_maps(tmp_path: Path):
    """The whole life cycle with this machine's JVM (its CDS log format included)."""
    writing = plan_archive(str(tmp_path), KEY)
    assert writing.use is ArchiveUse.WRITING
    subprocess.run(["java", *writing.java_options, "-version"], capture_output=True, check=True)
    mapped = plan_archive(str(tmp_path), KEY, pid=GONE)
    assert mapped.use is ArchiveUse.MAPPED
    archive = mapped.java_options[0]
    done = subprocess.run(["java", archive, "-Xshare:on", "-version"], capture_output=True)
    assert done.returncode == 0, done.stderr
