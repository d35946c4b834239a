"""Unaligned and alternating checkpoints end to end, with TaskManagers hosted as threads:
a keyed running count under backpressure (a slow operator after the keyed reduce) crashes
mid-stream and restarts from the latest checkpoint (with its channel state, if it has in-flight
buffers); the output must equal the failure-free one exactly."""

import collections
import time

import pytest

from flintlock.common import WatermarkStrategy
from flintlock.datastream import CheckpointingMode
from flintlock.datastream.connectors.number_seq import NumberSequenceSource
from flintlock.runtime.tasks import (
    async_checkpoint,
    channel_state_io,
    checkpoint_commands,
    stream_task,
)
from flintlock.testing.environments import local_environment
from flintlock.testing.executor import use_thread_executor
from flintlock.testing.faults import RaiseOnce
from flintlock.testing.recording import Recording

N = 4000
KEYS = 7

# Emptied by the executor fixture (TaskManagers are threads here).
WRITTEN = Recording("unaligned.written")
"""(checkpoint id, input bytes, output bytes) of every channel state written."""
RESTORED = Recording("unaligned.restored")
"""The same, of every channel state a restored subtask read."""
CONVERTED = Recording("unaligned.converted")
"""Checkpoint ids of the aligned barriers converted in a receiver's queue (alternating)."""


_convert_inputs = checkpoint_commands.CheckpointCommands._convert_inputs


def _recording_convert_inputs(self, barrier):
    converted = _convert_inputs(self, barrier)
    CONVERTED.extend([barrier.checkpoint_id] * converted)
    return converted


@pytest.fixture
def executor(monkeypatch):
    Recording.clear_all()
    monkeypatch.setattr(checkpoint_commands.CheckpointCommands, "_convert_inputs",
                        _recording_convert_inputs)
    monkeypatch.setattr(async_checkpoint, "write_channel_state", _recording_write)
    monkeypatch.setattr(stream_task, "read_channel_state", _recording_read)
    return use_thread_executor(monkeypatch)


def _sizes(snapshot):
    inputs = sum(len(b) for bs in snapshot.inputs.values() for b in bs)
    outputs = sum(len(b) for bs in snapshot.outputs.values() for b in bs)
    return snapshot.checkpoint_id, inputs, outputs


def _recording_write(snapshot, writer, name):
    WRITTEN.append(_sizes(snapshot))
    return channel_state_io.write_channel_state(snapshot, writer, name)


def _recording_read(state, read):
    snapshot = channel_state_io.read_channel_state(state, read)
    if snapshot is not None:
        RESTORED.append(_sizes(snapshot))
    return snapshot


class Slow:
    """Passes records through, taking ``seconds`` for each: the backpressure."""

    def __init__(self, seconds):
        self.seconds = seconds

    def __call__(self, value):
        time.sleep(self.seconds)  # the backpressure under test
        return value


def _pad(x):
    return (x % KEYS, 1, f"{x:02000d}")  # distinct strings: about 2 KB each on the wire


def _count(a, b):
    return (a[0], a[1] + b[1], a[2])


def _key_and_count(record):
    return (record[0], record[1])


def _env(tmp_path, **conf):
    env = local_environment(tmp_path, 2, restart_attempts=3, options={
        "execution.checkpointing.unaligned.enabled": "true",
        "taskmanager.memory.segment-size": "4 kb",
        "execution.buffer-timeout": "5 ms",
        **conf,
    })
    env.enable_checkpointing(50, CheckpointingMode.EXACTLY_ONCE)
    return env


def _job(env, marker):
    return (env.from_source(NumberSequenceSource(0, N - 1), WatermarkStrategy.no_watermarks(),
                            "numbers")
            .map(_pad)
            .key_by(lambda r: r[0])
            .reduce(_count)
            .map(Slow(0.001))
            .map(_key_and_count)
            .map(RaiseOnce(marker, (0, N // KEYS // 2))))


def _expected():
    per_key = collections.Counter(x % KEYS for x in range(N))
    return sorted((key, i) for key, n in per_key.items() for i in range(1, n + 1))


@pytest.mark.slow
def test_unaligned_checkpoints_under_backpressure_are_exactly_once(executor, tmp_path):
    marker = tmp_path / "crashed"
    results = list(_job(_env(tmp_path), marker).execute_and_collect())
    assert marker.exists(), "the failure was never injected"
    assert len(executor.launchers[-1].attempts) >= 2
    assert sorted(results) == _expected()
    assert any(inputs and outputs for _, inputs, outputs in WRITTEN), WRITTEN
    assert any(inputs or outputs for _, inputs, outputs in RESTORED), RESTORED


@pytest.mark.slow
def test_alternating_checkpoints_switch_and_stay_exactly_once(executor, tmp_path):
    marker = tmp_path / "crashed"
    env = _env(tmp_path, **{"execution.checkpointing.aligned-checkpoint-timeout": "10 ms"})
    results = list(_job(env, marker).execute_and_collect())
    assert marker.exists(), "the failure was never injected"
    assert sorted(results) == _expected()
    assert any(inputs and outputs for _, inputs, outputs in WRITTEN), WRITTEN
    # Under backpressure some aligned barriers had reached a receiver's queue before their
    # deadline: those were converted there (receiver side), not only at the sender.
    assert CONVERTED
