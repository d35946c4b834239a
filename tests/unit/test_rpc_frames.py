"""The RPC frame decoder: splitting, garbage, size limits, truncation."""

from __future__ import annotations

import pickle

import pytest
from hypothesis import given
from hypothesis import strategies as st

from flintlock.runtime.rpc import FrameDecoder, FrameTooLargeError, MalformedFrameError
from flintlock.runtime.rpc.frames import (
    HEADER,
    MAGIC,
    Frame,
    FrameKind,
    decode_payload,
    encode_frame,
    encode_message,
)


def test_a_message_round_trips():
    data = encode_message(FrameKind.CALL, 7, {"hello": [1, 2]}, 1024)
    (frame,) = FrameDecoder().feed(data)
    assert frame.kind is FrameKind.CALL and frame.correlation_id == 7
    assert decode_payload(frame) == {"hello": [1, 2]}


@given(
    st.lists(st.tuples(st.sampled_from(list(FrameKind)), st.integers(0, 2**64 - 1),
                       st.binary(max_size=200)), max_size=8),
    st.lists(st.integers(1, 50), min_size=1, max_size=20),
)
def test_any_split_of_the_stream_decodes_the_same_frames(frames, cuts):
    stream = b"".join(encode_frame(kind, cid, payload, 1024) for kind, cid, payload in frames)
    decoder = FrameDecoder(1024)
    decoded: list[Frame] = []
    position = 0
    for cut in cuts * (len(stream) // max(1, sum(cuts)) + 1):
        decoded += decoder.feed(stream[position:position + cut])
        position += cut
    decoded += decoder.feed(stream[position:])
    assert [(f.kind, f.correlation_id, f.payload) for f in decoded] == frames
    assert decoder.pending_bytes == 0


def test_bad_magic_is_malformed():
    with pytest.raises(MalformedFrameError, match="magic"):
        FrameDecoder().feed(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")


def test_unknown_kind_is_malformed():
    with pytest.raises(MalformedFrameError, match="kind 9"):
        FrameDecoder().feed(HEADER.pack(MAGIC, 9, 0, 0))


def test_an_oversized_length_is_refused_from_the_header_alone():
    decoder = FrameDecoder(max_frame_size=100)
    with pytest.raises(FrameTooLargeError) as info:
        decoder.feed(HEADER.pack(MAGIC, FrameKind.TELL, 0, 2**31))
    assert info.value.size == 2**31 and info.value.limit == 100
    copy = pickle.loads(pickle.dumps(info.value))
    assert isinstance(copy, FrameTooLargeError) and str(copy) == str(info.value)


def test_an_oversized_payload_is_refused_when_sending():
    with pytest.raises(FrameTooLargeError):
        encode_frame(FrameKind.TELL, 0, b"x" * 101, 100)


def test_a_truncated_frame_stays_pending():
    data = encode_message(FrameKind.TELL, 0, "payload", 1024)
    decoder = FrameDecoder()
    assert decoder.feed(data[:-3]) == []
    assert decoder.pending_bytes == len(data) - 3


def test_a_payload_that_does_not_unpickle_is_malformed():
    with pytest.raises(MalformedFrameError, match="unpickle"):
        decode_payload(Frame(FrameKind.TELL, 0, b"\x80\x05garbage"))


@given(st.binary(min_size=1, max_size=300))
def test_garbage_is_malformed_or_exactly_the_frames_it_encodes(garbage: bytes):
    decoder = FrameDecoder(max_frame_size=64)
    try:
        frames = decoder.feed(garbage)
    except MalformedFrameError:
        return
    consumed = len(garbage) - decoder.pending_bytes
    encoded = b"".join(encode_frame(f.kind, f.correlation_id, f.payload, 64) for f in frames)
    assert encoded == garbage[:consumed]
