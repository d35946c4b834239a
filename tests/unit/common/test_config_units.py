"""Durations and memory sizes as Flink writes them (flintlock.common.config_units)."""

import pytest

from flintlock.common.config_units import (
    format_duration,
    format_memory,
    parse_duration,
    parse_memory_bytes,
)


@pytest.mark.parametrize(("text", "ms"), [
    ("100", 100), (100, 100), ("100ms", 100), ("100 ms", 100), ("  7 millis ", 7),
    ("10 s", 10_000), ("10s", 10_000), ("3 secs", 3_000), ("1 second", 1_000),
    ("1 min", 60_000), ("2 minutes", 120_000), ("1 m", 60_000),
    ("2 h", 7_200_000), ("1 hour", 3_600_000), ("1 d", 86_400_000), ("2 days", 172_800_000),
    ("3000 us", 3), ("3000 µs", 3), ("2000000 ns", 2), ("4 MS", 4), ("-1", -1), (2.0, 2),
])
def test_durations_in_flinks_units_with_bare_numbers_in_milliseconds(text, ms):
    assert parse_duration(text, "ms") == ms


def test_a_bare_number_is_in_the_options_own_unit():
    assert parse_duration("120", "s") == 120
    assert parse_duration(120, "s") == 120
    assert parse_duration("2 min", "s") == 120
    assert parse_duration("120000 ms", "s") == 120


@pytest.mark.parametrize(("text", "hint"), [
    ("0.4", None), (0.4, None), ("1.5 s", "1500 ms"), ("0.5 min", "30 s"), ("2.25 h", "135 min"),
    ("1.0", "1 ms"),
])
def test_a_fraction_is_refused_not_truncated(text, hint):
    with pytest.raises(ValueError, match="fraction") as info:
        parse_duration(text, "ms")
    if hint is not None:
        assert f"write '{hint}'" in str(info.value)
    else:
        assert "write" not in str(info.value)


def test_a_fraction_is_refused_in_seconds_too_even_when_it_is_whole_milliseconds():
    with pytest.raises(ValueError, match="fraction"):
        parse_duration("1.5", "s")
    with pytest.raises(ValueError, match="not a whole number of s"):
        parse_duration("1500 ms", "s")


def test_a_duration_not_whole_in_the_options_unit_is_refused():
    with pytest.raises(ValueError, match="not a whole number of ms"):
        parse_duration("1500 us", "ms")


@pytest.mark.parametrize("text", [
    "9223372036854775808", "9223372036855 s", "106752 d", str(10**40) + " ns",
])
def test_an_overflowing_duration_is_refused(text):
    with pytest.raises(ValueError, match="2\\^63 ns"):
        parse_duration(text, "ms")


def test_the_longest_duration_is_accepted():
    assert parse_duration("9223372036854 ms", "ms") == 9_223_372_036_854
    assert parse_duration("106751 d", "ms") == 106_751 * 86_400_000


@pytest.mark.parametrize(("text", "reason"), [
    ("10 fortnights", "unknown time unit"), ("", "not a duration"), ("ms", "not a duration"),
    ("1e3", "not a duration"), ("10 s 5 ms", "not a duration"), (True, "boolean"),
    ("1,5 s", "not a duration"),
])
def test_malformed_durations_say_why(text, reason):
    with pytest.raises(ValueError, match=reason):
        parse_duration(text, "ms")


@pytest.mark.parametrize(("text", "size"), [
    ("32768", 32768), (4096, 4096), ("32kb", 32 << 10), ("32 k", 32 << 10),
    ("64 mb", 64 << 20), ("64 MB", 64 << 20), ("1g", 1 << 30), ("2 gibibytes", 2 << 30),
    ("1 t", 1 << 40), ("100 b", 100), ("3 bytes", 3), ("0", 0),
])
def test_memory_sizes_in_flinks_units_with_bare_numbers_in_bytes(text, size):
    assert parse_memory_bytes(text) == size


@pytest.mark.parametrize(("text", "reason"), [
    ("1.5 mb", "write '1536 kb'"), ("0.5", "fraction"), ("-1 kb", "negative"),
    ("9223372036854775808", "2\\^63"), ("8388608 tb", "2\\^63"), ("10 pb", "unknown memory unit"),
    (False, "boolean"),
])
def test_bad_memory_sizes_are_refused(text, reason):
    with pytest.raises(ValueError, match=reason):
        parse_memory_bytes(text)


def test_values_are_printed_in_the_largest_whole_unit():
    assert format_duration(600_000) == "10 min"
    assert format_duration(1_500) == "1500 ms"
    assert format_duration(0) == "0 ms"
    assert format_duration(-1) == "-1 ms"
    assert format_duration(120, "s") == "2 min"
    assert format_duration(7, "s") == "7 s"
    assert format_memory(32 * 1024) == "32 kb"
    assert format_memory(1 << 20) == "1 mb"
    assert format_memory(1000) == "1000 b"
