"""A Java HashMap's iteration order (the print connector's MAP and MULTISET values) against
this machine's OpenJDK 17 (tests/table/fixtures/java_hash_maps.txt, written by
tests/table/oracle/JavaHashMaps.java: 240 maps of 1 to 60 keys of six key types, including
resizes, negative numbers, -0.0 and non-ASCII strings)."""

from __future__ import annotations

import datetime
from collections.abc import Callable
from typing import Any

import pytest

from flintlock.table.formatting.java_hash import java_hash_order
from flintlock.table.types import DataType, DataTypes
from tests.table.oracle.cases import FIXTURES

PARSERS: dict[str, tuple[DataType, Callable[[str], Any]]] = {
    "STRING": (DataTypes.STRING(), str),
    "INT": (DataTypes.INT(), int),
    "BIGINT": (DataTypes.BIGINT(), int),
    "DOUBLE": (DataTypes.DOUBLE(), float),
    "BOOLEAN": (DataTypes.BOOLEAN(), lambda text: text == "true"),
    "DATE": (DataTypes.DATE(), datetime.date.fromisoformat),
}
LINES = (FIXTURES / "java_hash_maps.txt").read_text(encoding="utf-8").splitlines()


@pytest.mark.parametrize("index", range(len(LINES)))
def test_iteration_order_is_javas(index: int) -> None:
    kind, rest = LINES[index].split(" ", 1)
    inserted, iterated = (part.split(",") for part in rest.split(" | "))
    data_type, parse = PARSERS[kind]
    entries = [(parse(text), text) for text in inserted]
    assert [text for _, text in java_hash_order(entries, data_type)] == iterated
