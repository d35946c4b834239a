"""The TaskManager's side of metrics: one ``TaskMetrics`` per subtask, sampled per heartbeat.

It reads counters the data plane keeps already — nothing here counts per record:

- ``numRecordsOut`` / ``numBytesOut``: the record writers' totals (``RecordWriter.io_counts``,
  lock-free: a writer blocked for a buffer holds its lock);
- ``numBytesIn``: the input channels' ``bytes_received``;
- ``numRecordsIn``: the task counter ``numRecordsIn`` of the subtask's metric groups, which
  the input side increments per batch (0 for a source, as in Flink);
- ``inPoolUsage``: Flink's estimate over the remote channels' exclusive buffers and the
  gate's floating pool (the fullest gate); ``outPoolUsage``: buffers in use over the maximum
  of the result partitions' pools (the fullest);
- busy / backpressured / idle: the ``TaskTimeStatistics`` the heartbeat samples anyway;
- the TaskManager process: its resident memory (now and peak), cores, the machine's memory and
  its network buffer pool's segments (``/taskmanagers``, Prometheus' TaskManager figures).

The groups (``SubtaskMetricGroups``) reach the operators through their context's
``environment.metric_groups``, where ``RuntimeContext.get_metrics_group()`` and the operator chain
find them.

Threads: made on the TaskManager's deploying thread; ``sample`` on its heartbeat thread, and
once on the task thread of a subtask that finished (its final counts, sent before the
JobManager learns it finished); a lock keeps the two samples apart.
"""

from __future__ import annotations

import os
import resource
import socket
import threading
import time
from typing import Any

from flintlock.common.errors import FlintlockError
from flintlock.runtime.metrics import (
    NetworkMemory,
    ProcessStats,
    SubtaskMetricGroups,
    SubtaskMetrics,
    SubtaskMetricsReport,
    TaskIOCounters,
    TaskTimeSplit,
)
from flintlock.runtime.metrics.report import NUM_RECORDS_IN
from flintlock.runtime.network.buffer import LocalBufferPool
from flintlock.runtime.tasks.stream_task import TaskIO


class TaskMetrics:
    """Metric groups and sampling of one subtask (see the module doc)."""

    def __init__(self, *, job_id: str, job_name: str, tm_index: int, vertex_id: str,
                 task_name: str, subtask_index: int, attempt: int) -> None:
        variables = {
            "host": socket.gethostname(), "tm_id": f"tm-{tm_index}", "job_id": job_id,
            "job_name": job_name, "task_id": vertex_id, "task_name": task_name,
            "subtask_index": str(subtask_index), "task_attempt_num": str(attempt),
        }
        self.groups = SubtaskMetricGroups(task_variables=variables)
        self.records_in = self.groups.task.counter(NUM_RECORDS_IN)
        self._sampling = threading.Lock()  # the heartbeat, and a finishing task's last report
        self._metrics = SubtaskMetrics(self.groups.registry, tuple(variables.items()),
                                       time.monotonic())

    def sample(self, io: TaskIO, time_split: Any) -> SubtaskMetricsReport:
        """The report for one heartbeat; ``time_split`` is the ``TaskTimeStatistics`` the
        heartbeat took (or None)."""
        split = None if time_split is None else TaskTimeSplit(
            time_split.busy_ms_per_s, time_split.backpressured_ms_per_s,
            time_split.idle_ms_per_s)
        with self._sampling:
            return self._metrics.sample(self._io_counters(io), split, time.monotonic(),
                                        time.time_ns() // 1_000_000,
                                        process_stats(network_memory(io)))

    def _io_counters(self, io: TaskIO) -> TaskIOCounters:
        records_out = bytes_out = 0
        for writer in io.writers.values():
            records, size = writer.io_counts()
            records_out += records
            bytes_out += size
        bytes_in = sum(channel.bytes_received for gate in io.gates for channel in gate.channels)
        return TaskIOCounters(
            records_in=self.records_in.get_count(), records_out=records_out,
            bytes_in=bytes_in, bytes_out=bytes_out,
            in_pool_usage=max([0.0, *(input_usage(gate) for gate in io.gates)]),
            out_pool_usage=_usage([p.buffer_pool for p in io.partitions]))


def input_usage(gate: Any) -> float:
    """Flink's ``inPoolUsage`` estimate of one gate: the buffers holding data over all the
    buffers its remote channels may hold — their exclusive buffers (credit ledgers: initial
    credit less the empty ones) and the gate's floating pool (in use less the floating buffers
    channels hold empty). Local channels hold no buffers of their own and are ignored."""
    used = total = 0
    empty_floating = 0
    for channel in gate.channels:
        credit = getattr(channel, "credit_statistics", None)
        if credit is None:
            continue
        stats = credit()
        used += stats.initial_credit - stats.empty_exclusive
        total += stats.initial_credit
        empty_floating += stats.empty_floating
    pool = _gate_pool(gate)
    if pool is not None and not pool.is_destroyed:
        pool_stats = pool.statistics()
        used += max(0, pool_stats.in_use - empty_floating)
        total += pool_stats.max_buffers
    return min(1.0, used / total) if total > 0 else 0.0


def process_stats(network: NetworkMemory | None = None) -> ProcessStats:
    """This process's resident memory (``/proc/self/statm``; the peak from ``getrusage``
    where there is no /proc) and its peak, cores, the machine's physical memory, and
    ``network`` (the TaskManager's buffer pool, if the caller can see it)."""
    page = os.sysconf("SC_PAGE_SIZE")
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # KiB on Linux
    try:
        with open("/proc/self/statm", "rb") as statm:
            rss = int(statm.read().split()[1]) * page
    except (OSError, ValueError, IndexError):
        rss = peak
    return ProcessStats(os.getpid(), rss, os.cpu_count() or 1,
                        page * os.sysconf("SC_PHYS_PAGES"), max(peak, rss), network)


def network_memory(io: TaskIO) -> NetworkMemory | None:
    """The TaskManager's network buffer pool, reached through one of the subtask's local
    pools (its statistics take the pool's lock for a moment); None without any."""
    pools = [p.buffer_pool for p in io.partitions]
    pools += [pool for pool in map(_gate_pool, io.gates) if pool is not None]
    if not pools:
        return None
    network = pools[0].network_pool
    stats = network.statistics()
    return NetworkMemory(network.segment_size, stats.total_segments, stats.free_segments)


def _gate_pool(gate: Any) -> LocalBufferPool | None:
    try:
        pool: LocalBufferPool = gate.buffer_pool
    except FlintlockError:  # a gate of local channels only has no floating pool
        return None
    return pool


def _usage(pools: list[LocalBufferPool]) -> float:
    usages = [0.0]
    for pool in pools:
        if pool.is_destroyed:
            continue
        stats = pool.statistics()
        if stats.max_buffers > 0:
            usages.append(min(1.0, stats.in_use / stats.max_buffers))
    return max(usages)
