"""Reading Avro container files (PyFlink's ``AvroInputFormat`` of
``pyflink.datastream.formats.avro``, re-exported there)::

    schema = AvroSchema.parse_string(JSON_SCHEMA)
    ds = env.create_input(AvroInputFormat("/data/events.avro", schema))   # as in PyFlink
    ds.map(lambda record: record["name"])

Each record is a ``dict`` of the schema's fields, as PyFlink's generic records are read in
Python (nested records dicts too, arrays lists, maps dicts, enums their symbol, logical types
the values fastavro gives: ``date``, ``datetime``, ``Decimal``, ``UUID``). The schema is the
reader schema: files written with another, compatible schema are resolved to it (Avro's
schema resolution, fastavro's); an incompatible one fails.

``env.create_input`` turns the format into a bounded ``FileSource`` over its path (a file, or
a directory listed recursively without hidden files) with one split per file, so it is
checkpointed like any ``FileSource``: a split's position is the number of records of the file
already read, and a restore skips that many (whole Avro blocks are skipped without decoding
their records). A file that is not an Avro container file, or a block that cannot be read,
raises ``AvroFileError`` naming the file and the index of the record being read.

``AvroFileReader`` and its open file belong to the source task's thread.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from typing import Any, BinaryIO

import fsspec

from flintlock.common.errors import FlintlockError
from flintlock.datastream.connectors._enumeration import SplitQueueReader


class AvroFileError(FlintlockError):
    """An Avro file that cannot be read: names the file and the index of the record."""

    def __init__(self, path: str, record: int, reason: str) -> None:
        super().__init__(path, record, reason)
        self.path, self.record, self.reason = path, record, reason

    def __str__(self) -> str:
        return f"{self.path} at record {self.record}: {self.reason}"


def load_fastavro() -> Any:
    """fastavro (the ``avro`` extra), or an error that says how to install it."""
    try:
        import fastavro
    except ImportError:
        raise FlintlockError("the Avro format needs fastavro: pip install 'flintlock[avro]'") \
            from None
    return fastavro


class _Records:
    """The records of one open Avro file from a record index on."""

    def __init__(self, file: BinaryIO, path: str, position: int, schema: Any) -> None:
        self.position = position
        self._path = path
        self._records = self._from(file, position, schema)

    @staticmethod
    def _from(file: BinaryIO, position: int, schema: Any) -> Iterator[Any]:
        first = 0
        for block in load_fastavro().block_reader(file, reader_schema=schema):
            if first + block.num_records <= position:
                first += block.num_records  # before the restored position: not decoded
                continue
            for index, record in enumerate(block):
                if first + index >= position:
                    yield record
            first += block.num_records

    def next(self) -> tuple[bool, Any]:
        """(True, record), or (False, None) at the end of the file."""
        try:
            record = next(self._records)
        except StopIteration:
            return False, None
        except (ValueError, EOFError, OSError, IndexError, KeyError, UnicodeDecodeError,
                load_fastavro().read.SchemaResolutionError) as bad:
            raise AvroFileError(self._path, self.position, f"not a readable Avro file: "
                                f"{type(bad).__name__}: {bad}") from None
        self.position += 1
        return True, record


class AvroFileReader(SplitQueueReader):
    """Reads whole Avro files (``FileSplit`` s) as dicts; a split's position is the number
    of its records already read."""

    def __init__(self, schema: Any) -> None:
        super().__init__()
        self._schema = schema  # the parsed reader schema
        self._file: BinaryIO | None = None  # the head split's file and records; task thread
        self._records: _Records | None = None
        self._path: str | None = None

    def read_split(self, split: Any, budget: int, out: list[Any]) -> tuple[Any, bool]:
        records = self._records_of(split)
        for _ in range(budget):
            more, record = records.next()
            if not more:
                return split, True
            out.append(record)
        return dataclasses.replace(split, position=records.position), False

    def split_finished(self, split: Any) -> None:
        self._close_file()

    def close(self) -> None:
        self._close_file()

    def _records_of(self, split: Any) -> _Records:
        if self._records is None or self._path != split.path:
            self._close_file()
            self._file = fsspec.open(split.path, "rb").open()
            self._path = split.path
            self._records = _Records(self._file, split.path, split.position, self._schema)
        return self._records

    def _close_file(self) -> None:
        if self._file is not None:
            self._file.close()
        self._file, self._records, self._path = None, None, None
