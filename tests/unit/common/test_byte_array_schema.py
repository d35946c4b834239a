"""``ByteArraySchema``: bytes pass through unchanged; anything else is a clear error."""

import pytest

from flintlock.common import ByteArraySchema


def test_bytes_pass_through_both_ways():
    schema = ByteArraySchema()
    assert schema.serialize(b"\x00\xffab") == b"\x00\xffab"
    assert schema.serialize(bytearray(b"xy")) == b"xy"
    assert schema.deserialize(memoryview(b"raw")) == b"raw"
    assert schema == ByteArraySchema()


def test_a_string_is_refused_with_the_schema_to_use():
    with pytest.raises(TypeError, match="SimpleStringSchema"):
        ByteArraySchema().serialize("text")
