import pytest

from flintlock.common.ids import CheckpointId
from flintlock.runtime.network.barriers import (
    END_OF_PARTITION,
    AlignmentType,
    CancelCheckpointMarker,
    CheckpointBarrier,
    CheckpointOptions,
    CheckpointType,
)
from flintlock.runtime.network.buffer import DataType, unpooled_buffer
from flintlock.runtime.network.events import (
    MalformedEventError,
    UnknownEventTagError,
    decode_event,
    encode_event,
    is_end_of_partition,
)

EVENTS = [
    END_OF_PARTITION,
    CancelCheckpointMarker(CheckpointId(7)),
    CheckpointBarrier(CheckpointId(3), 1_700_000_000_000),
    CheckpointBarrier(CheckpointId(4), 5, CheckpointOptions(
        CheckpointType.SAVEPOINT, AlignmentType.FORCED_ALIGNED, None)),
    CheckpointBarrier(CheckpointId(5), 6, CheckpointOptions(
        CheckpointType.CHECKPOINT, AlignmentType.ALIGNED, 250)),
    ("watermark", 123),
]


@pytest.mark.parametrize("event", EVENTS)
def test_events_round_trip(event):
    buffer = encode_event(event)
    assert buffer.is_event
    assert decode_event(buffer) == event
    assert decode_event(bytes(buffer.view())) == event


def test_checkpoint_events_are_compact_and_not_pickled():
    assert encode_event(END_OF_PARTITION).size == 1
    assert encode_event(CancelCheckpointMarker(CheckpointId(1))).size == 9
    assert encode_event(CheckpointBarrier(CheckpointId(1), 2)).size == 27


def test_unaligned_barrier_is_a_priority_event():
    unaligned = CheckpointBarrier(CheckpointId(1), 2, CheckpointOptions(
        alignment=AlignmentType.UNALIGNED))
    assert encode_event(unaligned).data_type is DataType.PRIORITY_EVENT_BUFFER
    assert encode_event(CheckpointBarrier(CheckpointId(1), 2)).data_type is DataType.EVENT_BUFFER


def test_unknown_tag_and_bad_lengths_are_typed_errors():
    with pytest.raises(UnknownEventTagError) as info:
        decode_event(b"\x07")
    assert info.value.tag == 7
    with pytest.raises(MalformedEventError):
        decode_event(b"")
    with pytest.raises(MalformedEventError):
        decode_event(b"\x01\x00")
    with pytest.raises(MalformedEventError):
        decode_event(b"\x00\x00")
    bad_options = bytearray(encode_event(CheckpointBarrier(CheckpointId(1), 2)).view())
    bad_options[17] = 99
    with pytest.raises(MalformedEventError):
        decode_event(bytes(bad_options))


def test_end_of_partition_detection_looks_at_type_and_tag():
    assert is_end_of_partition(encode_event(END_OF_PARTITION))
    assert not is_end_of_partition(encode_event(CancelCheckpointMarker(CheckpointId(0))))
    assert not is_end_of_partition(unpooled_buffer(b"\x00", DataType.DATA_BUFFER))
