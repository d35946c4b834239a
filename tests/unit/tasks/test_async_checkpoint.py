"""The asynchronous part of a subtask's checkpoint and its cancellation (issue 29): an abort
that reaches the task before or while the part writes stops it before it acknowledges and
deletes what it already wrote. Driven through the task's checkpoint machine and its commands
with a snapshot executor that runs work when the test says so: no threads, no sleeps."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from flintlock.common.ids import CheckpointId
from flintlock.runtime.checkpoint.storage import CheckpointStorageLocation
from flintlock.runtime.network.barriers import CheckpointBarrier
from flintlock.runtime.state.snapshots import OperatorStateHandle, OperatorSubtaskState
from flintlock.runtime.tasks.checkpoint_commands import CheckpointCommands
from flintlock.runtime.tasks.checkpointing import events as ev
from flintlock.runtime.tasks.checkpointing.machine import MachineSettings, SubtaskCheckpointMachine
from flintlock.testing.clock import ManualClock

C1 = CheckpointId(1)


class FilePart:
    """A snapshot part that writes one file; ``during`` runs after it wrote (an abort
    arriving meanwhile)."""

    def __init__(self, name: str, during: Callable[[], None] = lambda: None) -> None:
        self.name = name
        self.during = during
        self.ran = False
        self.released = False

    def run(self, writer: Any, name: str) -> OperatorSubtaskState:
        self.ran = True
        handle = writer.write_state(f"{name}-{self.name}", b"state of " + self.name.encode())
        self.during()
        return OperatorSubtaskState(managed_operator_state=(OperatorStateHandle({}, handle),))

    def release(self) -> None:
        self.released = True


class Harness:
    def __init__(self, tmp_path: Path, parts: dict[str, FilePart]) -> None:
        self.directory = tmp_path / "chk-1"
        self.location = CheckpointStorageLocation(self.directory.as_uri(), C1).create()
        self.work: list[Callable[[], None]] = []
        self.acks: list[tuple[int, Any]] = []
        self.declines: list[tuple[int, Any]] = []
        callbacks = SimpleNamespace(
            acknowledge_checkpoint=lambda task, cid, state, metrics: self.acks.append((cid, state)),
            decline_checkpoint=lambda task, cid, reason, error: self.declines.append((cid, reason)))
        snapshots = SimpleNamespace(state_writer=lambda cid, savepoint: self.location,
                                    submit=self.work.append)
        vertex = SimpleNamespace(id="v" * 32, operators=[SimpleNamespace(operator_id="head")])
        task = SimpleNamespace(spec=SimpleNamespace(vertex=vertex, subtask_index=0),
                               io=SimpleNamespace(writers={}, partitions=[]))
        machine = SubtaskCheckpointMachine(MachineSettings(), None, ManualClock(0))
        self.commands = CheckpointCommands(task, machine, callbacks, snapshots,  # type: ignore[arg-type]
                                           None, ManualClock(0), lambda: None)  # type: ignore[arg-type]
        self.commands.chain = SimpleNamespace(  # type: ignore[assignment]
            snapshot=lambda cid: dict(parts),
            notify_checkpoint_aborted=lambda cid: None,
            notify_checkpoint_complete=lambda cid: None)

    def files(self) -> list[str]:
        return sorted(p.name for p in self.directory.iterdir())

    def run_async_part(self) -> None:
        (work,) = self.work
        work()


def test_an_async_part_that_finishes_acknowledges(tmp_path: Path) -> None:
    harness = Harness(tmp_path, {"head": FilePart("a"), "tail": FilePart("b")})
    harness.commands.feed(ev.TriggerReceived(CheckpointBarrier(C1, 0)))
    harness.run_async_part()
    assert [cid for cid, _ in harness.acks] == [C1] and harness.declines == []
    assert len(harness.files()) == 2


def test_an_abort_before_the_async_part_runs_writes_nothing(tmp_path: Path) -> None:
    first, second = FilePart("a"), FilePart("b")
    harness = Harness(tmp_path, {"head": first, "tail": second})
    harness.commands.feed(ev.TriggerReceived(CheckpointBarrier(C1, 0)))
    harness.commands.feed(ev.CheckpointAborted(C1))
    harness.run_async_part()
    assert harness.acks == [] and harness.declines == []
    assert harness.files() == [] and not first.ran and first.released and second.released


def test_an_abort_while_the_async_part_writes_stops_it_and_deletes_its_files(
        tmp_path: Path) -> None:
    """The RocksDB upload after expiry: the checkpoint expires while the first part writes;
    the second part is never written, the first part's file is deleted, nothing is acked."""
    harness: Harness
    second = FilePart("b")

    def abort_arrives() -> None:
        harness.commands.feed(ev.CheckpointAborted(C1))

    harness = Harness(tmp_path, {"head": FilePart("a", during=abort_arrives), "tail": second})
    harness.commands.feed(ev.TriggerReceived(CheckpointBarrier(C1, 0)))
    assert harness.commands.running == [C1]
    harness.run_async_part()
    assert harness.acks == [] and harness.declines == []
    assert harness.files() == []
    assert not second.ran and second.released
    assert harness.commands.running == []


def test_an_abort_after_the_acknowledgement_changes_nothing(tmp_path: Path) -> None:
    harness = Harness(tmp_path, {"head": FilePart("a")})
    harness.commands.feed(ev.TriggerReceived(CheckpointBarrier(C1, 0)))
    harness.run_async_part()
    harness.commands.feed(ev.CheckpointAborted(C1))
    assert [cid for cid, _ in harness.acks] == [C1] and len(harness.files()) == 1
