"""java.time's toString (the print connector's DATE, TIME, TIMESTAMP, TIMESTAMP_LTZ values)
against this machine's OpenJDK 17 (tests/table/fixtures/java_times.txt, written by
tests/table/oracle/JavaTimes.java: 512 instants from year 1 on, at microsecond resolution)."""

from __future__ import annotations

import datetime

import pytest

from flintlock.table.formatting.java_values import (
    java_instant,
    java_local_date,
    java_local_date_time,
    java_local_time,
)
from tests.table.oracle.cases import FIXTURES

LINES = (FIXTURES / "java_times.txt").read_text().splitlines()
EPOCH = datetime.datetime(1970, 1, 1)


@pytest.mark.parametrize("index", range(len(LINES)))
def test_java_time_text_is_the_jdks(index: int) -> None:
    micros, local, instant, time, date = LINES[index].split(" ")
    value = EPOCH + datetime.timedelta(microseconds=int(micros))
    assert java_local_date_time(value) == local
    assert java_instant(value) == instant  # a naive value is a UTC instant
    assert java_instant(value.replace(tzinfo=datetime.UTC).astimezone(
        datetime.timezone(datetime.timedelta(hours=8)))) == instant
    assert java_local_time(value.time()) == time
    assert java_local_date(value.date()) == date
