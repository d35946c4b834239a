"""The wire protocol: every message round-trips; the decoder rejects garbage with typed errors."""

from __future__ import annotations

import pickle
import struct

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from flintlock.common.ids import IntermediateDataSetId, ResultPartitionId, SubtaskIndex
from flintlock.runtime.network.frame_decoder import FrameDecoder
from flintlock.runtime.network.protocol import (
    HEADER,
    MAGIC,
    AddCredit,
    BacklogAnnouncement,
    BufferResponse,
    CancelPartitionRequest,
    CloseRequest,
    ConnectionLostError,
    ErrorKind,
    ErrorResponse,
    FrameTooLargeError,
    MalformedFrameError,
    Message,
    MessageType,
    PartitionRequest,
    Ping,
    Pong,
    RemoteError,
    encode,
)

PID = ResultPartitionId(IntermediateDataSetId("ds-ü"), SubtaskIndex(3), 1)
MAX = 1 << 20


def wire(*messages: Message) -> bytes:
    return b"".join(bytes(chunk) for m in messages for chunk in encode(m))


def payload_bytes(message: Message) -> Message:
    if isinstance(message, BufferResponse):
        return BufferResponse(
            message.receiver_id, message.sequence_number, message.backlog, message.data_type,
            bytes(message.payload), message.size,  # type: ignore[call-overload]
        )
    return message


class Boom(Exception):
    pass


CONTROL: list[Message] = [
    PartitionRequest(PID, 2, 7, 4),
    AddCredit(7, 3),
    CancelPartitionRequest(2**63),
    CloseRequest(),
    BacklogAnnouncement(4, 17),
    Ping(),
    Pong(),
    ErrorResponse(None, ErrorKind.OTHER, "text only"),
    ErrorResponse.of(9, ErrorKind.PRODUCER_FAILED, Boom("producer died")),
]


@pytest.mark.parametrize("message", CONTROL, ids=lambda m: type(m).__name__)
def test_control_messages_round_trip(message: Message) -> None:
    assert FrameDecoder(MAX).feed(wire(message)) == [message]


def test_buffer_response_round_trips_with_its_payload() -> None:
    sent = BufferResponse(5, 11, 2, 0, b"abc" * 5000, 15000)
    [received] = FrameDecoder(MAX).feed(wire(sent))
    assert payload_bytes(received) == sent


def test_empty_buffer_payload() -> None:
    sent = BufferResponse(5, 0, 0, 1, b"", 0)
    assert [payload_bytes(m) for m in FrameDecoder(MAX).feed(wire(sent))] == [sent]


def test_error_cause_is_rebuilt_and_falls_back_to_text() -> None:
    response = ErrorResponse.of(1, ErrorKind.PRODUCER_FAILED, Boom("x"))
    cause = response.cause()
    assert isinstance(cause, Boom) and cause.args == ("x",)
    assert "Boom: x" in response.text
    garbled = ErrorResponse(1, ErrorKind.OTHER, "remote text", b"not a pickle")
    assert isinstance(garbled.cause(), RemoteError)
    assert str(garbled.cause()) == "remote text"


messages = st.one_of(
    st.sampled_from(CONTROL),
    st.builds(
        BufferResponse, st.integers(0, 2**64 - 1), st.integers(0, 2**64 - 1),
        st.integers(0, 2**32 - 1), st.integers(0, 2), st.just(b""), st.just(0),
    ).flatmap(
        lambda m: st.binary(max_size=20000).map(
            lambda p: BufferResponse(m.receiver_id, m.sequence_number, m.backlog, m.data_type,
                                     p, len(p))
        )
    ),
)


@settings(max_examples=60, deadline=None)
@given(st.lists(messages, max_size=12), st.lists(st.integers(1, 9000), min_size=1))
def test_any_split_of_the_stream_decodes_the_same_messages(
    sent: list[Message], cuts: list[int]
) -> None:
    data = wire(*sent)
    decoder = FrameDecoder(MAX, staging_size=8192)
    received: list[Message] = []
    position, i = 0, 0
    while position < len(data):
        step = cuts[i % len(cuts)]
        received += decoder.feed(data[position:position + step])
        position, i = position + step, i + 1
    decoder.close("peer")
    assert [payload_bytes(m) for m in received] == sent


def test_large_payload_is_received_straight_into_the_allocated_buffer() -> None:
    targets: list[bytearray] = []

    class Allocator:
        def allocate(self, receiver_id: int, data_type: int, size: int):  # type: ignore[no-untyped-def]
            targets.append(bytearray(size))
            return memoryview(targets[-1]), targets[-1]

    payload = bytes(range(256)) * 128
    data = wire(BufferResponse(1, 0, 0, 0, payload, len(payload)))
    decoder = FrameDecoder(MAX, Allocator(), staging_size=4096)
    first = decoder.read_target()
    first[:4096] = data[:4096]
    assert decoder.bytes_received(4096) == []
    direct = decoder.read_target()
    assert direct.obj is targets[0]  # the rest goes straight into the receiver's buffer
    rest = data[4096:]
    direct[:len(rest)] = rest
    [message] = decoder.bytes_received(len(rest))
    assert isinstance(message, BufferResponse) and message.payload is targets[0]
    assert bytes(targets[0]) == payload


def test_bad_magic_is_a_malformed_frame() -> None:
    with pytest.raises(MalformedFrameError, match="bad magic"):
        FrameDecoder(MAX).feed(b"GET / HTTP/1.1\r\n\r\n")


def test_unknown_message_type_is_a_malformed_frame() -> None:
    with pytest.raises(MalformedFrameError, match="unknown message type 99"):
        FrameDecoder(MAX).feed(HEADER.pack(MAGIC, 99, 0))


def test_unknown_data_type_is_a_malformed_frame() -> None:
    decoder = FrameDecoder(MAX, valid_data_type=lambda t: t < 3)
    with pytest.raises(MalformedFrameError, match="data type 7"):
        decoder.feed(wire(BufferResponse(1, 0, 0, 7, b"x", 1)))


def test_wrong_body_length_is_a_malformed_frame() -> None:
    with pytest.raises(MalformedFrameError):
        FrameDecoder(MAX).feed(HEADER.pack(MAGIC, MessageType.ADD_CREDIT, 3) + b"abc")


def test_oversized_length_fails_before_allocating() -> None:
    allocations: list[int] = []

    class Allocator:
        def allocate(self, receiver_id: int, data_type: int, size: int):  # type: ignore[no-untyped-def]
            allocations.append(size)
            return None

    decoder = FrameDecoder(4096, Allocator())
    with pytest.raises(FrameTooLargeError) as info:
        decoder.feed(HEADER.pack(MAGIC, MessageType.BUFFER_RESPONSE, 2**32 - 1))
    assert info.value.length == 2**32 - 1 and info.value.limit == 4096
    assert allocations == []
    assert pickle.loads(pickle.dumps(info.value)).length == 2**32 - 1


def test_truncated_frame_at_close_is_a_lost_connection_naming_what_was_pending() -> None:
    data = wire(AddCredit(1, 1), BufferResponse(1, 0, 0, 0, b"z" * 100, 100))
    decoder = FrameDecoder(MAX)
    assert decoder.feed(data[:-40]) == [AddCredit(1, 1)]
    with pytest.raises(ConnectionLostError, match="60 of 100 bytes") as info:
        decoder.close("tm-2")
    assert pickle.loads(pickle.dumps(info.value)).peer == "tm-2"


def test_truncated_header_at_close_is_reported() -> None:
    decoder = FrameDecoder(MAX)
    decoder.feed(struct.pack("!I", MAGIC))
    with pytest.raises(ConnectionLostError, match="frame header"):
        decoder.close("peer")


def test_clean_close_between_frames_is_silent() -> None:
    decoder = FrameDecoder(MAX)
    decoder.feed(wire(CloseRequest()))
    decoder.close("peer")


def test_discarded_payload_is_skipped() -> None:
    class Discard:
        def allocate(self, receiver_id: int, data_type: int, size: int) -> None:
            return None

    data = wire(BufferResponse(1, 0, 0, 0, b"q" * 9000, 9000), AddCredit(2, 2))
    out = FrameDecoder(MAX, Discard(), staging_size=4096).feed(data)
    assert out == [BufferResponse(1, 0, 0, 0, None, 9000), AddCredit(2, 2)]


def test_big_error_response_larger_than_staging() -> None:
    big = ErrorResponse(3, ErrorKind.OTHER, "t" * 20000)
    assert FrameDecoder(MAX, staging_size=4096).feed(wire(big)) == [big]
