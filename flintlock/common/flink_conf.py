"""Reading a Flink installation's configuration (``$FLINK_CONF_DIR``) into flintlock's.

A team moving jobs from Flink keeps its ``config.yaml``. ``Configuration.load`` reads it below
flintlock's own file and code (see ``flintlock.common.config``), through this module:

- Which file: ``config.yaml`` (Flink 1.19+, standard YAML, nested or flat keys) when present,
  else the legacy ``flink-conf.yaml`` (one ``key: value`` per line, ``#`` starts a comment,
  values are text; a line without ``": "`` is skipped, as Flink skips it). Like Flink, only
  one of them is read: ``config.yaml`` wins.
- What each key becomes, in this order:
  1. ``NOT_TAKEN_FROM_FLINK``: flintlock has the key, but in a Flink file it says where
     *Flink's* processes listen (``jobmanager.rpc.address: localhost``). flintlock puts its
     JobManager in the Spark driver and its TaskManagers in executors and picks these itself,
     so taking them would point TaskManagers on other hosts at ``localhost``. Likewise the
     Flink cluster's high availability (``high-availability.*``: its ZooKeeper, its storage):
     a flintlock driver's HA is set in flintlock's own configuration. Not applied.
  2. A key flintlock defines (or one of its older Flink names): applied, parsed and bounded
     like any other value; a bad value fails naming the key and the file.
  3. A key of Flink's that has no meaning in flintlock: under one of ``FLINK_NAMESPACES``
     (JVM memory, Flink's RPC, HA, metrics reporters, ...) or one of ``FLINK_KEYS``. Ignored.
  4. Anything else: ``UnknownConfigKeyError`` naming the file, with the nearest keys flintlock
     or Flink has as suggestions (a typo is an error, not a silent no-op).
  The keys of 1 and 3 are reported in one warning per file read.

The lists are maintained by hand against Flink's configuration reference (1.19 to 2.x): when
flintlock implements a setting, its key leaves them by being defined (rule 2 comes first).

Reads files, holds no state; called on the thread that loads a configuration.
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from flintlock.common.errors import ConfigurationError, UnknownConfigKeyError
from flintlock.common.option_lookup import defined_keys, flatten_nested

FLINK_CONF_DIR_ENV = "FLINK_CONF_DIR"
FLINK_CONF_FILE = "config.yaml"
LEGACY_FLINK_CONF_FILE = "flink-conf.yaml"

NOT_TAKEN_FROM_FLINK: frozenset[str] = frozenset({
    "jobmanager.bind-host", "jobmanager.rpc.address", "jobmanager.rpc.port",
    "rest.bind-address", "rest.port", "taskmanager.host", "taskmanager.data.port",
    "high-availability.type", "high-availability", "high-availability.storageDir",
    "high-availability.cluster-id", "high-availability.filesystem.lease-duration",
    "high-availability.filesystem.lease-wait-timeout",
})

FLINK_NAMESPACES: tuple[str, ...] = (
    # Flink's processes and deployment: flintlock's run inside Spark.
    "jobmanager", "taskmanager.memory", "taskmanager.cpu", "taskmanager.heap",
    "taskmanager.rpc", "taskmanager.data", "taskmanager.registration", "taskmanager.runtime",
    "taskmanager.debug", "taskmanager.resource-id", "taskmanager.slot", "taskmanager.log",
    "taskmanager.load-balance", "taskmanager.state", "taskmanager.collect-sink",
    "taskmanager.network", "env", "containerized", "kubernetes", "yarn", "deployment", "client",
    "cluster", "resourcemanager", "slotmanager", "slot", "external-resource",
    # Flink's RPC, BLOB server, web UI, REST extras, history server, HA, security.
    "akka", "pekko", "blob", "rest", "web", "historyserver", "high-availability", "zookeeper",
    "job-result-store", "jobstore", "security",
    # Observability and file systems configured for the JVM.
    "metrics", "traces", "events", "jmx", "fs", "s3", "s3a", "presto", "gs", "hadoop",
    # APIs and state backends flintlock does not have.
    "table", "sql-client", "sql-gateway", "queryable-state", "python", "state.backend.rocksdb",
    "state.backend.forst", "state.backend.changelog", "state.changelog", "dstl",
    "state.backend.latency-track", "state.latency-track", "execution.batch",
    "execution.sort-partition", "execution.sorted-inputs", "execution.async-state",
    "execution.checkpointing.file-merging", "execution.checkpointing.local-backup",
    "execution.checkpointing.unaligned", "pipeline.watermark-alignment",
    "task.cancellation.timers",
)
"""A key equal to one of these or below it (``name.``) is Flink's; keys flintlock defines
under them (``taskmanager.memory.segment-size``) are still applied."""

FLINK_KEYS: frozenset[str] = frozenset({
    "classloader.fail-on-metaspace-oom-error", "heartbeat.rpc-failure-threshold",
    "external-resources", "taskmanager.bind-host", "taskmanager.jvm-exit-on-oom",
    "execution.attached", "execution.shutdown-on-attached-exit", "execution.job-listeners",
    "execution.target", "execution.submit-failed-job-on-application-error",
    "execution.allow-client-job-configurations", "execution.batch-shuffle-mode",
    "execution.buffer-timeout.enabled", "execution.buffer-timeout.interval",
    "execution.savepoint-restore-mode", "execution.state-recovery.claim-mode",
    "execution.state-recovery.from-local",
    "execution.state-recovery.without-channel-state.checkpoint-id",
    "execution.checkpointing.approximate-local-recovery",
    "execution.checkpointing.checkpoints-after-tasks-finish",
    "execution.checkpointing.checkpoints-after-tasks-finish.enabled",
    "execution.checkpointing.cleaner.parallel-mode", "execution.checkpointing.create-subdir",
    "execution.checkpointing.interval-during-backlog",
    "execution.checkpointing.prefer-checkpoint-for-recovery",
    "execution.checkpointing.recover-without-channel-state.checkpoint-id",
    "execution.checkpointing.snapshot-compression", "execution.checkpointing.storage",
    "execution.checkpointing.write-buffer-size",
    "pipeline.auto-generate-uids", "pipeline.auto-type-registration", "pipeline.cached-files",
    "pipeline.classpaths", "pipeline.closure-cleaner-level",
    "pipeline.default-kryo-serializers", "pipeline.force-avro", "pipeline.force-kryo",
    "pipeline.force-kryo-avro", "pipeline.generic-types", "pipeline.jars",
    "pipeline.jobvertex-parallelism-overrides", "pipeline.object-reuse",
    "pipeline.operator-chaining.chain-operators-with-different-max-parallelism",
    "pipeline.registered-kryo-types", "pipeline.registered-pojo-types",
    "pipeline.serialization-config", "pipeline.time-characteristic",
    "pipeline.vertex-description-mode", "pipeline.vertex-name-include-index-prefix",
    "state.backend", "state.backend.async", "state.backend.local-recovery",
    "state.backend.fs.checkpointdir", "state.backend.fs.write-buffer-size",
    "state.checkpoint-storage", "state.checkpoint.cleaner.parallel-mode",
    "state.checkpoints.create-subdir", "state.storage.fs.write-buffer-size",
})
"""Single Flink keys, in areas where flintlock implements some keys and not these."""


@dataclass(frozen=True, slots=True)
class FlinkConfFile:
    """What a Flink configuration file gives flintlock.

    ``values``: the keys flintlock takes, as written (parsed when set); ``ignored``: Flink's
    keys with no meaning here; ``not_taken``: flintlock keys a Flink file does not set;
    ``skipped_lines``: legacy lines without ``": "`` (numbers, from 1).
    """

    path: Path
    values: Mapping[str, Any]
    ignored: tuple[str, ...]
    not_taken: tuple[str, ...]
    skipped_lines: tuple[int, ...] = ()

    def warning(self) -> str | None:
        """The one message to log for this file, or None when nothing was left out."""
        parts = []
        if self.ignored:
            parts.append(f"{len(self.ignored)} Flink keys have no meaning in flintlock and are "
                         f"ignored: {', '.join(self.ignored)}")
        if self.not_taken:
            parts.append("where Flink's own processes listen is not taken from a Flink file "
                         "(flintlock places its JobManager and TaskManagers on Spark; set these "
                         f"in flintlock-conf.yaml to choose): {', '.join(self.not_taken)}")
        if self.skipped_lines:
            lines = ", ".join(str(n) for n in self.skipped_lines)
            parts.append(f"lines without 'key: value' skipped, as Flink skips them: {lines}")
        return f"Flink configuration {self.path}: " + "; ".join(parts) if parts else None


def find_flink_conf(directory: str | os.PathLike[str]) -> Path | None:
    """``config.yaml`` in ``directory``, else ``flink-conf.yaml``, else None."""
    for name in (FLINK_CONF_FILE, LEGACY_FLINK_CONF_FILE):
        path = Path(directory) / name
        if path.is_file():
            return path
    return None


def read_flink_conf(path: Path) -> FlinkConfFile:
    """Read and sort the keys of a Flink file (see the module docstring). Raises
    ``UnknownConfigKeyError`` for a key neither flintlock nor Flink has."""
    text = path.read_text(encoding="utf-8")
    skipped: tuple[int, ...] = ()
    if path.name == LEGACY_FLINK_CONF_FILE:
        items, skipped = parse_legacy_flink_conf(text)
    else:
        items = _standard_yaml_items(path, text)
    known = defined_keys()
    values: dict[str, Any] = {}
    ignored: list[str] = []
    not_taken: list[str] = []
    for key, value in items:
        if key in NOT_TAKEN_FROM_FLINK:
            not_taken.append(key)
        elif key in known or key.startswith("spark."):
            values[key] = value
        elif is_flink_key(key):
            ignored.append(key)
        else:
            raise UnknownConfigKeyError(key, _suggestions(key, known), str(path))
    return FlinkConfFile(path, values, tuple(ignored), tuple(not_taken), skipped)


def is_flink_key(key: str) -> bool:
    """Whether ``key`` is one of Flink's that flintlock ignores (see ``FLINK_NAMESPACES``)."""
    return key in FLINK_KEYS or any(
        key == space or key.startswith(space + ".") for space in FLINK_NAMESPACES)


def parse_legacy_flink_conf(text: str) -> tuple[list[tuple[str, str]], tuple[int, ...]]:
    """``flink-conf.yaml`` as Flink reads it: per line, cut at ``#``, split at the first
    ``": "``; lines with no such split or an empty key or value are skipped (their numbers
    returned)."""
    items: list[tuple[str, str]] = []
    skipped: list[int] = []
    for number, line in enumerate(text.splitlines(), start=1):
        content = line.split("#", 1)[0].strip()
        if not content:
            continue
        key, sep, value = content.partition(": ")
        if not sep or not key.strip() or not value.strip():
            skipped.append(number)
            continue
        items.append((key.strip(), value.strip()))
    return items, tuple(skipped)


def _standard_yaml_items(path: Path, text: str) -> list[tuple[str, Any]]:
    import yaml

    try:
        data = yaml.safe_load(text) or {}
    except yaml.YAMLError as exc:
        raise ConfigurationError(f"{path}: not valid YAML: {exc}") from exc
    if not isinstance(data, Mapping):
        raise ConfigurationError(f"{path}: expected a map of keys to values at the top level")
    return list(flatten_nested(data))


def _suggestions(key: str, known: frozenset[str]) -> tuple[str, ...]:
    candidates = sorted(known | FLINK_KEYS | NOT_TAKEN_FROM_FLINK)
    return tuple(difflib.get_close_matches(key, candidates, n=2))
