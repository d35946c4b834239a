"""The byte form of a map state's user key in the RocksDB backend: the canonical encoding of
``common.canonical_keys`` where the key has one, else its state pickle behind a ``P`` tag
(equal only to an equal pickle, as the backend always compared such keys). Lives in the
runtime because it pickles state values (``pickles``); ``common`` never imports the runtime.
"""

from __future__ import annotations

from flintlock.common.canonical_keys import encode_key, uvarint
from flintlock.common.key_encoding import UnstableKeyError
from flintlock.runtime.state.pickles import dumps


def encode_user_key(key: object) -> bytes:
    try:
        return encode_key(key)
    except UnstableKeyError:
        data: bytes = dumps(key)
        return b"P" + uvarint(len(data)) + data
