"""Encoder and SimpleStringSchema (flintlock.common.serialization)."""

import pickle

import pytest

from flintlock.common.serialization import Encoder, SimpleStringSchema, UnknownCharsetError


def test_simple_string_encoder_writes_str_and_a_newline():
    encoder = Encoder.simple_string_encoder()
    assert encoder.encode(("a", 1)) == b"('a', 1)\n"
    assert encoder.encode_all(["é", 2]) == "é\n2\n".encode()
    assert encoder.encode_all([]) == b""
    assert Encoder.simple_string_encoder("latin-1").encode("é") == b"\xe9\n"


def test_values_pickle_and_compare():
    encoder = Encoder.simple_string_encoder("UTF-16")
    assert pickle.loads(pickle.dumps(encoder)) == encoder
    assert hash(encoder) == hash(Encoder("UTF-16"))
    schema = SimpleStringSchema("latin-1")
    assert pickle.loads(pickle.dumps(schema)) == schema != SimpleStringSchema()


def test_simple_string_schema_round_trips():
    schema = SimpleStringSchema()
    assert schema.deserialize(schema.serialize("grüße")) == "grüße"


def test_an_unknown_charset_fails_where_it_is_named():
    with pytest.raises(UnknownCharsetError) as info:
        Encoder.simple_string_encoder("utf-9")
    error = pickle.loads(pickle.dumps(info.value))
    assert error.charset == "utf-9" and "utf-9" in str(error)
    with pytest.raises(UnknownCharsetError):
        SimpleStringSchema("nope")
