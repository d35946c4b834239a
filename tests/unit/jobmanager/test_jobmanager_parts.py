"""The JobManager's parts without Spark and without sockets (issue 19): an attempt that fails
(its root cause waits for a consequence's cause) and restarts under the restart strategy, and
a checkpoint that times out, carried out by ``CheckpointActions`` on the JobManager's event
loop with a manual clock."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

from flintlock.common.config import Configuration
from flintlock.runtime import messages as msg
from flintlock.runtime.checkpoint.pending import TaskId
from flintlock.runtime.execution_state import ExecutionState
from flintlock.runtime.jobmanager.attempt import ROOT_CAUSE_GRACE_MS, Attempt
from flintlock.runtime.jobmanager.checkpoint_actions import CheckpointActions
from flintlock.runtime.jobmanager.event_loop import EventLoop
from flintlock.runtime.restart import create_restart_strategy
from flintlock.testing.clock import ManualClock
from tests.unit.checkpoint.coordinator_harness import ALL, SOURCES, TIMEOUT, Harness


class _Connection:
    """Records what the JobManager tells one TaskManager."""

    def __init__(self) -> None:
        self.told: list[Any] = []

    def tell(self, message: Any) -> None:
        self.told.append(message)

    def close(self) -> None:
        pass


class _OneTaskManager(Attempt):
    """An attempt whose subtasks all run on TaskManager 0."""

    def task_manager_of(self, task: TaskId) -> int:
        return 0


def _attempt(number: int = 0) -> tuple[_OneTaskManager, _Connection]:
    attempt = _OneTaskManager(number, graph=None, plan=None)  # type: ignore[arg-type]
    connection = _Connection()
    attempt.connections[0] = connection  # type: ignore[assignment]
    attempt.deployed = True
    return attempt, connection


def test_a_consequence_waits_for_its_cause_and_the_attempt_restarts_then_fails() -> None:
    clock = ManualClock(0)
    strategy = create_restart_strategy(Configuration({
        "restart-strategy.type": "fixed-delay",
        "restart-strategy.fixed-delay.attempts": 1,
        "restart-strategy.fixed-delay.delay": "10 ms"}), False, clock, random.Random(1))
    attempt, _ = _attempt()
    producer_failed = RuntimeError("my producer failed")
    attempt.record_failure(producer_failed, consequence=True, now_ms=clock.now_ms())
    assert attempt.root_cause(clock.now_ms()) is None  # waits for the cause's report
    cause = ValueError("the user function raised")
    clock.advance(ROOT_CAUSE_GRACE_MS / 2)
    attempt.record_failure(cause, consequence=False, now_ms=clock.now_ms())
    attempt.record_failure(RuntimeError("later"), consequence=False, now_ms=clock.now_ms())
    assert attempt.root_cause(clock.now_ms()) is cause  # the first real failure wins
    first = strategy.on_failure(cause)
    assert first.restart and first.delay_ms == 10

    second, _ = _attempt(1)
    second.record_failure(producer_failed, consequence=True, now_ms=clock.now_ms())
    clock.advance(ROOT_CAUSE_GRACE_MS)
    assert second.root_cause(clock.now_ms()) is producer_failed  # no cause came: give up
    assert not strategy.on_failure(producer_failed).restart  # attempts used up: FAILED


def test_subtask_states_decide_started_finished_and_silence() -> None:
    attempt, _ = _attempt()
    tasks = list(ALL)
    for task in tasks:
        attempt.states[task] = ExecutionState.DEPLOYING
    assert not attempt.all_started()
    attempt.states[tasks[0]] = ExecutionState.FINISHED
    for task in tasks[1:]:
        attempt.states[task] = ExecutionState.RUNNING
    assert attempt.all_started() and not attempt.all_finished()


def test_a_checkpoint_that_times_out_is_aborted_on_every_task_manager(tmp_path: Path) -> None:
    harness = Harness(tmp_path, interval=100)
    clock = harness.clock
    loop = EventLoop(clock)
    attempt, connection = _attempt()
    stopped: list[bool] = []
    actions = CheckpointActions(harness.coordinator, loop, lambda: attempt,
                                lambda: stopped.append(True))
    harness.all_running()
    actions.apply(harness.coordinator.start())
    clock.advance(100)  # the first trigger is due within one interval
    loop.process(0)
    triggers = [m for m in connection.told if isinstance(m, msg.TriggerCheckpoint)]
    assert sorted(m.task for m in triggers) == sorted(SOURCES)
    checkpoint_id = triggers[0].checkpoint_id
    harness.ack(checkpoint_id, SOURCES[0])  # one task acknowledges, the others never do
    clock.advance(TIMEOUT)
    loop.process(0)
    aborted = [m for m in connection.told if isinstance(m, msg.NotifyCheckpointAborted)]
    assert [m.checkpoint_id for m in aborted] == [checkpoint_id]  # once per TaskManager
    history = {c.checkpoint_id: c.status.name for c in harness.coordinator.statistics().history}
    assert history[checkpoint_id] == "FAILED"
    assert not stopped
