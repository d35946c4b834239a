"""What reaches a task's mailbox, and in which order."""

from types import SimpleNamespace

from flintlock.runtime.network.barriers import CheckpointOptions
from flintlock.runtime.tasks.stream_task import CheckpointingSettings, StreamTask


def _task():
    vertex = SimpleNamespace(name="Source", parallelism=1)
    spec = SimpleNamespace(vertex=vertex, subtask_index=0,
                           checkpointing=CheckpointingSettings(), finished_on_restore=False)
    io = SimpleNamespace(writers={}, partitions=[], gates=[])
    return StreamTask(spec, io, callbacks=None, snapshots=None, read_state=None,
                      create_operator=None)


def test_splits_sent_before_a_trigger_reach_the_source_before_it():
    """The enumerator's snapshot counts a split as assigned once it is sent; the reader's
    snapshot (at the trigger) must then hold it, or a restore would lose the split."""
    task = _task()
    task.notify_checkpoint_complete(1)
    task.assign_splits("op", ["split-a"], False)
    task.trigger_checkpoint(2, 0, CheckpointOptions())
    task.assign_splits("op", ["split-b"], True)
    order = [mail.description for mail in task.mailbox.take_all()]
    assert order == ["splits for op", "trigger 2", "splits for op", "complete 1"]
