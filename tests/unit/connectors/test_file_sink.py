"""FileSink writer: part file states (in progress → pending → committed), idempotent commit,
recovery, rolling policies, names and buckets, and the exactly-once law under crashes."""

import os
import pickle

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from flintlock.common.serialization import Encoder
from flintlock.datastream.connectors import Sink
from flintlock.datastream.connectors._buckets import java_pattern_to_strftime
from flintlock.datastream.connectors._file_sink import (
    FileSinkWriter,
    PartFileCollisionError,
    PendingFile,
    commit_file,
)
from flintlock.datastream.connectors.file_system import (
    BucketAssigner,
    FileSink,
    OutputFileConfig,
    RollingPolicy,
)
from flintlock.testing.clock import ManualClock

BASE = BucketAssigner.base_path_bucket_assigner()


def _sink(path, policy=None, assigner=BASE, config=None):
    builder = FileSink.for_row_format(str(path), Encoder.simple_string_encoder())
    builder.with_bucket_assigner(assigner)
    if policy is not None:
        builder.with_rolling_policy(policy)
    if config is not None:
        builder.with_output_file_config(config)
    return builder.build()


def _writer(sink, subtask=0, parallelism=1, clock=None, state=()):
    writer = FileSinkWriter(sink.settings, subtask, parallelism, clock or ManualClock(1000))
    writer.restore(list(state))
    return writer


def _visible(root):
    """Committed files: name -> content."""
    out = {}
    for directory, _, names in os.walk(root):
        for name in names:
            if not name.startswith("."):
                path = os.path.join(directory, name)
                out[os.path.relpath(path, root)] = open(path).read()
    return out


def _hidden(root):
    return sorted(n for _, _, names in os.walk(root) for n in names if n.startswith("."))


def _lines(root):
    return sorted(line for text in _visible(root).values() for line in text.splitlines())


def test_a_checkpointed_part_is_pending_until_its_checkpoint_completes(tmp_path):
    writer = _writer(_sink(tmp_path))
    writer.write(["a", "b"])
    assert _visible(tmp_path) == {} and len(_hidden(tmp_path)) == 1
    state = writer.snapshot_state(1)
    assert [type(e).__name__ for e in state] == ["PendingFile", "PartCounter"]
    assert _visible(tmp_path) == {}
    writer.write(["c"])
    writer.commit(1)
    assert _visible(tmp_path) == {"part-0-0": "a\nb\n"}
    writer.snapshot_state(2)
    writer.commit(2)
    assert _visible(tmp_path) == {"part-0-0": "a\nb\n", "part-0-1": "c\n"}
    assert _hidden(tmp_path) == []


def test_commit_covers_every_earlier_checkpoint(tmp_path):
    writer = _writer(_sink(tmp_path))
    for n in (1, 2, 3):
        writer.write([str(n)])
        writer.snapshot_state(n)
    writer.commit(2)
    assert _lines(tmp_path) == ["1", "2"]
    writer.commit(3)
    assert _lines(tmp_path) == ["1", "2", "3"]


def test_without_checkpoints_end_input_commits_everything(tmp_path):
    writer = _writer(_sink(tmp_path, RollingPolicy.default_rolling_policy(part_size=4)))
    writer.write(["aa", "bb", "cc"])
    writer.end_input()
    writer.close()
    assert _visible(tmp_path) == {"part-0-0": "aa\nbb\n", "part-0-1": "cc\n"}


def test_end_input_leaves_files_of_an_incomplete_checkpoint_pending(tmp_path):
    writer = _writer(_sink(tmp_path))
    writer.write(["a"])
    writer.snapshot_state(7)
    writer.end_input()
    assert _visible(tmp_path) == {}
    writer.commit(7)
    assert _lines(tmp_path) == ["a"]


def test_with_checkpointing_end_input_leaves_the_tail_to_the_final_checkpoint(tmp_path):
    writer = _writer(_sink(tmp_path))
    writer.set_checkpointing(True)
    writer.write(["tail"])
    writer.end_input()
    assert _visible(tmp_path) == {} and len(_hidden(tmp_path)) == 1
    writer.snapshot_state(1)
    writer.commit(1)
    assert _visible(tmp_path) == {"part-0-0": "tail\n"}


def test_told_nothing_a_writer_that_saw_a_checkpoint_leaves_the_tail_to_the_next(tmp_path):
    writer = _writer(_sink(tmp_path))
    writer.write(["a"])
    writer.snapshot_state(1)
    writer.write(["tail"])
    writer.end_input()
    assert _visible(tmp_path) == {}
    writer.snapshot_state(2)
    writer.commit(2)
    assert _lines(tmp_path) == ["a", "tail"]


def test_told_checkpointing_is_off_a_restored_writer_commits_at_the_end(tmp_path):
    writer = _writer(_sink(tmp_path))
    writer.write(["a"])
    state = writer.snapshot_state(1)
    again = _writer(_sink(tmp_path), state=state)
    again.set_checkpointing(False)
    again.write(["b"])
    again.end_input()
    assert _lines(tmp_path) == ["a", "b"]


def test_restore_commits_the_pending_files_of_the_checkpoint(tmp_path):
    writer = _writer(_sink(tmp_path))
    writer.write(["a"])
    state = writer.snapshot_state(1)
    writer.close()
    _writer(_sink(tmp_path), state=pickle.loads(pickle.dumps(state)))
    assert _visible(tmp_path) == {"part-0-0": "a\n"}


def test_commit_is_idempotent_after_restore(tmp_path):
    writer = _writer(_sink(tmp_path))
    writer.write(["a"])
    state = writer.snapshot_state(1)
    writer.commit(1)
    writer.commit(1)
    again = _writer(_sink(tmp_path), state=state)
    again.commit(1)
    assert _visible(tmp_path) == {"part-0-0": "a\n"}


def test_in_progress_files_after_the_checkpoint_are_discarded(tmp_path):
    writer = _writer(_sink(tmp_path))
    writer.write(["a"])
    state = writer.snapshot_state(1)
    writer.write(["lost"])
    writer.close()
    assert len(_hidden(tmp_path)) == 2
    again = _writer(_sink(tmp_path), state=state)
    again.write(["b"])
    again.snapshot_state(2)
    again.commit(2)
    assert _visible(tmp_path) == {"part-0-0": "a\n", "part-0-2": "b\n"}
    assert _hidden(tmp_path) == []


def test_a_fresh_writer_never_reuses_a_name_in_the_directory(tmp_path):
    first = _writer(_sink(tmp_path))
    first.write(["run 1"])
    first.end_input()
    second = _writer(_sink(tmp_path))
    second.write(["run 2"])
    second.end_input()
    assert _visible(tmp_path) == {"part-0-0": "run 1\n", "part-0-1": "run 2\n"}


def test_a_rescaled_writer_keeps_other_subtasks_pending_files(tmp_path):
    sink = _sink(tmp_path)
    old = [_writer(sink, i, 2) for i in range(2)]
    for i, writer in enumerate(old):
        writer.write([f"w{i}"])
    states = [w.snapshot_state(1) for w in old]
    old[1].write(["after"])
    new = _writer(sink, 0, 1, state=states[0] + states[1])
    assert _lines(tmp_path) == ["w0", "w1"]
    assert len(_hidden(tmp_path)) == 1
    new.write(["x"])
    new.snapshot_state(2)
    new.commit(2)
    assert _lines(tmp_path) == ["w0", "w1", "x"]
    assert "part-0-1" in _visible(tmp_path)


def test_commit_file_finishes_an_interrupted_move_and_rejects_a_collision(tmp_path):
    import fsspec

    fs = fsspec.filesystem("file")
    (tmp_path / ".h").write_text("same")
    (tmp_path / "f").write_text("same")
    commit_file(fs, PendingFile(1, str(tmp_path / ".h"), str(tmp_path / "f")))
    assert not (tmp_path / ".h").exists()
    (tmp_path / ".h").write_text("different")
    with pytest.raises(PartFileCollisionError) as info:
        commit_file(fs, PendingFile(1, str(tmp_path / ".h"), str(tmp_path / "f")))
    assert pickle.loads(pickle.dumps(info.value)).final_path == str(tmp_path / "f")


def test_part_size_rolls_before_the_record_that_would_start_past_it(tmp_path):
    writer = _writer(_sink(tmp_path, RollingPolicy.default_rolling_policy(part_size=6)))
    writer.write(["abc", "def", "g"])
    writer.write(["h"])
    writer.end_input()
    assert _visible(tmp_path) == {"part-0-0": "abc\ndef\n", "part-0-1": "g\nh\n"}


def test_rollover_and_inactivity_intervals(tmp_path):
    clock = ManualClock(0)
    policy = RollingPolicy.default_rolling_policy(rollover_interval=100, inactivity_interval=30)
    writer = _writer(_sink(tmp_path, policy), clock=clock)
    writer.write(["a"])
    clock.advance(20)
    writer.write(["b"])
    clock.advance(29)
    writer.write(["c"])
    clock.advance(30)
    writer.write(["d"])
    for _ in range(5):
        clock.advance(25)
        writer.write(["e"])
    writer.end_input()
    assert _visible(tmp_path) == {"part-0-0": "a\nb\nc\n", "part-0-1": "d\ne\ne\ne\n",
                                  "part-0-2": "e\ne\n"}


def test_on_checkpoint_policy_rolls_only_at_checkpoints(tmp_path):
    clock = ManualClock(0)
    writer = _writer(_sink(tmp_path, RollingPolicy.on_checkpoint_rolling_policy()), clock=clock)
    writer.write(["x" * 1000])
    clock.advance(10**9)
    writer.write(["y"])
    writer.snapshot_state(1)
    writer.write(["z"])
    writer.snapshot_state(2)
    writer.commit(2)
    assert sorted(_visible(tmp_path).values()) == ["x" * 1000 + "\ny\n", "z\n"]


def test_prefix_and_suffix_name_the_parts(tmp_path):
    config = OutputFileConfig.builder().with_part_prefix("out").with_part_suffix(".txt").build()
    writer = _writer(_sink(tmp_path, config=config), subtask=3, parallelism=4)
    writer.write(["a"])
    writer.end_input()
    assert list(_visible(tmp_path)) == ["out-3-0.txt"]
    assert (config.get_part_prefix(), config.get_part_suffix()) == ("out", ".txt")


def test_date_time_buckets_follow_the_processing_time(tmp_path):
    clock = ManualClock(0)
    assigner = BucketAssigner.date_time_bucket_assigner("yyyy-MM-dd--HH'h'mm", "UTC")
    writer = _writer(_sink(tmp_path, assigner=assigner), clock=clock)
    writer.write(["a"])
    clock.advance(60_000)
    writer.write(["b"])
    writer.end_input()
    assert _visible(tmp_path) == {"1970-01-01--00h00/part-0-0": "a\n",
                                  "1970-01-01--00h01/part-0-1": "b\n"}


def test_java_patterns_translate_to_strftime():
    assert java_pattern_to_strftime("yyyy-MM-dd--HH") == "%Y-%m-%d--%H"
    assert java_pattern_to_strftime("yy/mm:ss 'at' %") == "%y/%M:%S at %%"


def test_the_default_bucket_assigner_is_date_time(tmp_path):
    sink = FileSink.for_row_format(str(tmp_path), Encoder.simple_string_encoder()).build()
    assert isinstance(sink, Sink)
    assert type(sink.settings.bucket_assigner).__name__ == "DateTimeBucketAssigner"


def test_builder_validation(tmp_path):
    builder = FileSink.for_row_format(str(tmp_path), Encoder.simple_string_encoder())
    with pytest.raises(TypeError):
        builder.with_rolling_policy("size")
    with pytest.raises(TypeError):
        builder.with_bucket_assigner(None)
    with pytest.raises(ValueError):
        RollingPolicy.default_rolling_policy(part_size=0)
    with pytest.raises(ValueError):
        OutputFileConfig("a/b")
    with pytest.raises(TypeError):
        FileSink.for_row_format(str(tmp_path), "utf-8")
    with pytest.raises(NotImplementedError):
        builder.enable_compact()
    assert builder.with_bucket_check_interval(1000).disable_compact() is builder


steps = st.lists(st.one_of(
    st.tuples(st.just("write"), st.integers(1, 6)),
    st.tuples(st.just("checkpoint"), st.just(0)),
    st.tuples(st.just("complete"), st.just(0)),
    st.tuples(st.just("crash"), st.just(0))), max_size=30)


@settings(max_examples=60, deadline=None)
@given(steps=steps, part_size=st.integers(3, 40))
def test_committed_output_is_exactly_the_input_under_any_crash(tmp_path_factory, steps,
                                                               part_size):
    """A replayable source of numbered records feeds the writer; checkpoints record the
    source position with the writer's state; a crash restores the latest completed one."""
    root = tmp_path_factory.mktemp("out")
    sink = _sink(root, RollingPolicy.default_rolling_policy(part_size=part_size))
    position, checkpoint_id = 0, 0
    taken = {}  # checkpoint -> (position, state), not yet complete
    completed = (0, [])
    writer = _writer(sink)
    for op, n in steps:
        if op == "write":
            writer.write([str(i) for i in range(position, position + n)])
            position += n
        elif op == "checkpoint":
            checkpoint_id += 1
            taken[checkpoint_id] = (position, writer.snapshot_state(checkpoint_id))
        elif op == "complete" and taken:
            latest = max(taken)
            completed = taken[latest]
            taken.clear()
            writer.commit(latest)
        elif op == "crash":
            writer.close()
            position, state = completed
            taken.clear()
            writer = _writer(sink, state=state)
    writer.write([str(i) for i in range(position, position + 5)])
    checkpoint_id += 1
    writer.snapshot_state(checkpoint_id)
    writer.end_input()
    writer.commit(checkpoint_id)
    expected = max(position + 5, 0)
    assert sorted(map(int, _lines(root))) == list(range(expected))


def test_an_fsspec_url_as_base_path():
    import fsspec

    fs = fsspec.filesystem("memory")
    try:
        writer = _writer(_sink("memory://k1-sink/out"))
        writer.write(["a", "b"])
        state = writer.snapshot_state(1)
        writer.write(["c"])
        writer.close()
        again = _writer(_sink("memory://k1-sink/out"), state=state)
        again.set_checkpointing(False)
        again.write(["d"])
        again.end_input()
        visible = {p.rsplit("/", 1)[1]: fs.cat(p) for p in fs.find("/k1-sink/out")
                   if not p.rsplit("/", 1)[1].startswith(".")}
        assert visible == {"part-0-0": b"a\nb\n", "part-0-2": b"d\n"}
    finally:
        fs.rm("/k1-sink", recursive=True)


def test_a_part_file_moves_only_forward(tmp_path):
    import fsspec

    from flintlock.datastream.connectors._file_sink import (
        IllegalPartMoveError,
        PartState,
        _InProgressPart,
    )
    from flintlock.datastream.connectors._rolling import PartFileInfo

    part = _InProgressPart(fsspec.filesystem("file"), str(tmp_path / ".p"), str(tmp_path / "p"),
                           PartFileInfo("", 0, 0))
    part.write(b"x", 1)
    assert part.close() == PendingFile(None, str(tmp_path / ".p"), str(tmp_path / "p"))
    with pytest.raises(IllegalPartMoveError) as info:
        part.write(b"y", 2)
    assert "pending" in str(pickle.loads(pickle.dumps(info.value)))
    with pytest.raises(IllegalPartMoveError):
        part.close()
    part.abandon()
    assert part.state is PartState.PENDING
