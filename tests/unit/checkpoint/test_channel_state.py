"""Channel state: collecting in-flight buffers from handler actions, the byte format (round
trip, every truncation and bit flip rejected), and replay per channel on recovery."""

from __future__ import annotations

import pickle

import pytest
from hypothesis import given
from hypothesis import strategies as st

from flintlock.runtime.checkpoint.alignment import (
    CheckpointBarrier,
    CheckpointingMode,
    PersistInflight,
    TriggerCheckpoint,
    create_barrier_handler,
)
from flintlock.runtime.checkpoint.channel_state import (
    ChannelStateSnapshot,
    ChannelStateWriter,
    CorruptChannelStateError,
    RecoveredInput,
    UnknownCheckpointError,
    buffer_bytes,
)
from flintlock.runtime.state.handles import CorruptStateError
from flintlock.testing.clock import ManualClock


class ViewBuffer:
    """Looks like the network Buffer: content through ``view()``."""

    def __init__(self, data: bytes) -> None:
        self.segment = bytearray(data) + bytearray(8)
        self.size = len(data)

    def view(self) -> memoryview:
        return memoryview(self.segment)[: self.size]


def snapshot(
    inputs: dict[int, list[bytes]], outputs: dict[int, list[bytes]] | None = None
) -> ChannelStateSnapshot:
    return ChannelStateSnapshot(
        7,  # type: ignore[arg-type]
        {ch: tuple(bs) for ch, bs in inputs.items()},
        {ch: tuple(bs) for ch, bs in (outputs or {}).items()},
    )


def test_collects_what_the_unaligned_handler_persists_in_channel_order() -> None:
    handler = create_barrier_handler(
        3, CheckpointingMode.EXACTLY_ONCE, unaligned=True, clock=ManualClock(0)
    )
    writer = ChannelStateWriter()
    calls = [
        lambda: handler.on_barrier(0, CheckpointBarrier(1, 0)),  # type: ignore[arg-type]
        lambda: handler.on_buffer(1, b"b1"),  # type: ignore[arg-type]
        lambda: handler.on_buffer(2, ViewBuffer(b"c1")),  # type: ignore[arg-type]
        lambda: handler.on_buffer(1, bytearray(b"b2")),  # type: ignore[arg-type]
        lambda: handler.on_buffer(0, b"after barrier"),  # type: ignore[arg-type]
        lambda: handler.on_barrier(1, CheckpointBarrier(1, 0)),  # type: ignore[arg-type]
        lambda: handler.on_buffer(2, memoryview(b"c2")),  # type: ignore[arg-type]
        lambda: handler.on_barrier(2, CheckpointBarrier(1, 0)),  # type: ignore[arg-type]
    ]
    for call in calls:
        for action in call():
            if isinstance(action, TriggerCheckpoint):
                writer.start(action.checkpoint_id)
            elif isinstance(action, PersistInflight):
                writer.add_input(action.checkpoint_id, action.channel, action.buffer)
    assert not handler.is_capturing(1)  # type: ignore[arg-type]
    state = writer.finish(1)  # type: ignore[arg-type]
    assert dict(state.inputs) == {1: (b"b1", b"b2"), 2: (b"c1", b"c2")}
    assert state.size == 8
    assert writer.open_checkpoints == []


def test_bytes_are_copied_when_added() -> None:
    writer = ChannelStateWriter()
    writer.start(1)  # type: ignore[arg-type]
    data = bytearray(b"abc")
    writer.add_input(1, 0, data)  # type: ignore[arg-type]
    data[:] = b"xyz"
    assert writer.finish(1).inputs[0] == (b"abc",)  # type: ignore[arg-type]


def test_partial_record_and_output_data_are_added_directly() -> None:
    writer = ChannelStateWriter()
    writer.start(3)  # type: ignore[arg-type]
    writer.add_input(3, 1, b"tail of a record")  # type: ignore[arg-type]
    writer.add_output(3, 0, b"overtaken output")  # type: ignore[arg-type]
    state = writer.finish(3)  # type: ignore[arg-type]
    assert dict(state.inputs) == {1: (b"tail of a record",)}
    assert dict(state.outputs) == {0: (b"overtaken output",)}


def test_abort_discards_and_unknown_checkpoints_are_refused() -> None:
    writer = ChannelStateWriter()
    writer.start(1)  # type: ignore[arg-type]
    writer.add_input(1, 0, b"x")  # type: ignore[arg-type]
    writer.abort(1)  # type: ignore[arg-type]
    assert writer.open_checkpoints == []
    with pytest.raises(UnknownCheckpointError):
        writer.finish(1)  # type: ignore[arg-type]
    with pytest.raises(UnknownCheckpointError):
        writer.add_input(2, 0, b"x")  # type: ignore[arg-type]
    error = pickle.loads(pickle.dumps(UnknownCheckpointError(2)))
    assert isinstance(error, UnknownCheckpointError)


def test_buffer_bytes_refuses_what_has_no_bytes() -> None:
    assert buffer_bytes(ViewBuffer(b"hi")) == b"hi"
    with pytest.raises(TypeError):
        buffer_bytes(object())


def test_round_trip_of_an_empty_snapshot() -> None:
    empty = ChannelStateSnapshot(5)  # type: ignore[arg-type]
    assert empty.is_empty
    back = ChannelStateSnapshot.from_bytes(empty.to_bytes())
    assert back.checkpoint_id == 5 and back.is_empty


@given(
    st.dictionaries(st.integers(0, 2**32 - 1), st.lists(st.binary(max_size=40), max_size=4)),
    st.dictionaries(st.integers(0, 2**32 - 1), st.lists(st.binary(max_size=40), max_size=4)),
)
def test_round_trip_keeps_every_buffer_in_order(
    inputs: dict[int, list[bytes]], outputs: dict[int, list[bytes]]
) -> None:
    state = snapshot(inputs, outputs)
    back = ChannelStateSnapshot.from_bytes(state.to_bytes())
    assert back.checkpoint_id == 7
    assert dict(back.inputs) == {ch: tuple(bs) for ch, bs in inputs.items()}
    assert dict(back.outputs) == {ch: tuple(bs) for ch, bs in outputs.items()}


def test_every_truncation_and_every_bit_flip_is_rejected() -> None:
    data = snapshot({0: [b"abc", b""], 3: [b"defg"]}, {1: [b"out"]}).to_bytes()
    for length in range(len(data)):
        with pytest.raises(CorruptChannelStateError):
            ChannelStateSnapshot.from_bytes(data[:length])
    for position in range(len(data)):
        damaged = bytearray(data)
        damaged[position] ^= 0x10
        with pytest.raises(CorruptChannelStateError):
            ChannelStateSnapshot.from_bytes(bytes(damaged))


def test_corruption_error_names_the_source_and_pickles() -> None:
    with pytest.raises(CorruptStateError) as caught:
        ChannelStateSnapshot.from_bytes(b"garbage garbage", uri="file:///cp/7/in")
    error = pickle.loads(pickle.dumps(caught.value))
    assert isinstance(error, CorruptChannelStateError)
    assert "file:///cp/7/in" in str(error)


def test_recovered_input_replays_each_channel_in_order() -> None:
    restored = ChannelStateSnapshot.from_bytes(
        snapshot({0: [b"a1", b"a2"], 2: [b"c1"], 5: []}).to_bytes()
    )
    recovered = RecoveredInput(restored)
    assert recovered.pending_channels == [0, 2]
    assert not recovered.has_pending(5)
    assert recovered.poll(2) == b"c1"
    assert recovered.poll(2) is None
    assert list(recovered.drain(0)) == [b"a1", b"a2"]
    assert recovered.is_drained
