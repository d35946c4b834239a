"""Java's Double.toString / Float.toString / BigDecimal.toString as the JDK 17 that Flink runs
on prints them (tests/table/fixtures/java_numbers.txt, written by
tests/table/oracle/JavaNumbers.java on this machine's OpenJDK 17: 3342 values, special ones and
seeded random ones of every kind)."""

from __future__ import annotations

import struct
from decimal import Decimal

from flintlock.table.formatting.java_values import java_big_decimal, java_double, java_float
from tests.table.oracle.cases import FIXTURES

KNOWN_DIFFERENCES = {
    # JDK 17's FloatingDecimal is not the shortest-digits algorithm everywhere (JDK 19 fixed
    # it, JDK-4511638); these are the values of the fixture where its digits differ from the
    # shortest and flintlock does not model them (docs/internals/table-types-and-formats.md).
    ("d", "44b52d02c7e14af6"): "9.999999999999999E22",   # 1e23
    ("d", "44c52d02c7e14af6"): "1.9999999999999998E23",  # 2e23
    ("d", "1"): "4.9E-324",                              # the smallest subnormal double
    ("f", "1"): "1.4E-45",                               # the smallest subnormal float
    ("f", "800000"): "1.17549435E-38",                   # the smallest normal float
    ("f", "6a1a1990"): "4.6573822E25",
}


def _mismatches() -> dict[tuple[str, str], str]:
    found = {}
    for line in (FIXTURES / "java_numbers.txt").read_text().splitlines():
        kind, first, *rest = line.split(" ")
        if kind == "d":
            ours = java_double(struct.unpack(">d", bytes.fromhex(first.rjust(16, "0")))[0])
        elif kind == "f":
            ours = java_float(struct.unpack(">f", bytes.fromhex(first.rjust(8, "0")))[0])
        else:
            scale = int(rest[0])
            ours = java_big_decimal(Decimal(int(first)).scaleb(-scale), scale)
        expected = rest[-1]
        if ours != expected:
            found[(kind, first)] = expected
    return found


def test_java_number_text_matches_the_jdk_except_the_listed_differences() -> None:
    assert _mismatches() == KNOWN_DIFFERENCES
