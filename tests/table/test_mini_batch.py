"""Mini-batch aggregation in one and two phases (``changelog.mini_batch_agg`` on the bundle
operators) and the order Flink's mini-batch buffer walks its keys (``changelog.binary_rows``).
The exact changelogs against PyFlink 2.3.0 are the parity program ``table_mini_batch``; these
tests pin the pieces: the binary key layout, the settings' checks, the two-phase fallback, and
the final table of every strategy being the same."""

from __future__ import annotations

import datetime
import decimal
import struct
from typing import Any

import pytest

from flintlock.common.types import RowKind
from flintlock.datastream.changelog.binary_rows import (
    binary_row,
    binary_row_hash,
    hash_map_order,
    murmur_words,
)
from flintlock.table.errors import ValidationError


def test_a_short_string_sits_in_its_slot_and_a_long_one_in_the_variable_part() -> None:
    short = binary_row(["ann"], ["STRING"])
    assert short == bytes(8) + b"ann" + bytes(4) + bytes([0x83])
    long = binary_row(["eight888", 5], ["STRING", "BIGINT"])
    header, slot, number, tail = long[:8], long[8:16], long[16:24], long[24:]
    assert header == bytes(8)
    assert struct.unpack("<q", slot)[0] == (24 << 32) | 8  # offset 24, 8 bytes
    assert struct.unpack("<q", number)[0] == 5 and tail == b"eight888"


def test_a_null_field_sets_its_bit_and_a_null_wide_value_keeps_its_variable_bytes() -> None:
    row = binary_row([None, None], ["STRING", "WIDEDECIMAL:2"])
    assert row[0] == 0 and row[1] == 0b11  # bits 8 and 9: fields 0 and 1
    assert row[8:16] == bytes(8)
    assert struct.unpack("<q", row[16:24])[0] == 24 << 32 and row[24:] == bytes(16)


def test_wide_timestamps_and_decimals_are_laid_out_as_flink_writes_them() -> None:
    stamp = datetime.datetime(1970, 1, 1, 0, 0, 1, 2_500)  # 1002 ms and 500 us
    row = binary_row([stamp], ["TIMESTAMP9"])
    assert struct.unpack("<q", row[8:16])[0] == (16 << 32) | 500_000
    assert struct.unpack("<q", row[16:24])[0] == 1002
    wide = binary_row([decimal.Decimal("-1.28")], ["WIDEDECIMAL:2"])
    assert struct.unpack("<q", wide[8:16])[0] == (16 << 32) | 1  # -128 is one byte, 0x80
    assert wide[16:32] == bytes([0x80]) + bytes(15)


def test_murmur_over_words_matches_the_reference_vectors() -> None:
    # MurmurHash3 x86 32-bit's published verification values (inputs of whole words, where
    # Flink's word-wise variant is the standard one)
    assert murmur_words(b"", seed=0) == 0
    assert murmur_words(b"", seed=1) == 0x514E28B7
    assert murmur_words(b"", seed=0xFFFFFFFF) == 0x81F16F39
    assert murmur_words(bytes(4), seed=0) == 0x2362F9DE
    assert binary_row_hash(["ann"], ["STRING"]) == murmur_words(binary_row(["ann"],
                                                                           ["STRING"]))


def test_keys_come_in_flinks_buffer_order_and_unknown_types_keep_arrival_order() -> None:
    # Flink 2.3.0 emitted ann, cid, bob for a mini-batch holding ann, bob, cid (and 3, 2, 4)
    assert hash_map_order(["ann", "bob", "cid"], ["STRING"]) == ["ann", "cid", "bob"]
    assert hash_map_order([3, 2, 4], ["BIGINT"]) == [3, 2, 4]
    assert hash_map_order(["ann", "bob", "cid"], [None]) == ["ann", "bob", "cid"]
    pairs = [("a", 1), ("b", 2), ("c", 3)]
    assert sorted(hash_map_order(pairs, ["STRING", "BIGINT"], lambda key: key)) == pairs


# -- the planner's settings and strategies (TaskManager threads) --------------------------------

CLICKS = [(1, "ann", "home"), (2, "bob", "home"), (3, "ann", "cart"), (4, "cid", "home"),
          (5, "bob", "cart"), (6, "ann", "home"), (7, "cid", "pay"), (8, "bob", "home")]


def _environment(monkeypatch: Any, **settings: str) -> Any:
    from flintlock.table import EnvironmentSettings, TableEnvironment
    from flintlock.testing.executor import use_thread_executor

    use_thread_executor(monkeypatch)
    t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    config = t_env.get_config()
    config.set("parallelism.default", "1")
    for key, value in settings.items():
        config.set(key, value)
    t_env.create_temporary_view("clicks", t_env.from_elements(CLICKS, ["id", "who", "page"]))
    return t_env


def _final(changelog: list[tuple[RowKind, tuple[Any, ...]]]) -> list[tuple[Any, ...]]:
    rows: list[tuple[Any, ...]] = []
    for kind, row in changelog:
        if kind in (RowKind.INSERT, RowKind.UPDATE_AFTER):
            rows.append(row)
        else:
            rows.remove(row)
    return sorted(rows)


def _run(t_env: Any, query: str) -> list[tuple[RowKind, tuple[Any, ...]]]:
    return [(r.get_row_kind(), tuple(r)) for r in t_env.execute_sql(query).collect()]


ENABLED = {"table.exec.mini-batch.enabled": "true",
           "table.exec.mini-batch.allow-latency": "1 h"}


@pytest.mark.parametrize("missing, message", [
    ({"table.exec.mini-batch.size": "10", "table.exec.mini-batch.allow-latency": "0 ms"},
     "allow-latency must be more than 0"),
    ({}, "size must be more than 0"),
])
def test_mini_batch_without_a_latency_or_a_size_is_refused(monkeypatch, missing, message
                                                            ) -> None:
    t_env = _environment(monkeypatch, **{**ENABLED, **missing})
    with pytest.raises(ValidationError, match=message):
        _run(t_env, "SELECT who, COUNT(*) FROM clicks GROUP BY who")


NESTED = ("SELECT n, COUNT(*) AS people, SUM(n) AS total FROM "
          "(SELECT who, COUNT(*) AS n FROM clicks GROUP BY who) GROUP BY n")


@pytest.mark.parametrize("strategy", ["ONE_PHASE", "TWO_PHASE", "AUTO"])
@pytest.mark.parametrize("size", ["1", "2", "3", "1000"])
def test_every_strategy_and_size_ends_in_the_same_table_as_without_mini_batch(
        monkeypatch, strategy, size) -> None:
    """The nested query's inner aggregation retracts (its updates reach the outer one), so
    the outer two-phase aggregation folds retractions into its partial results."""
    plain = _final(_run(_environment(monkeypatch), NESTED))
    t_env = _environment(monkeypatch, **ENABLED, **{
        "table.exec.mini-batch.size": size, "table.optimizer.agg-phase-strategy": strategy})
    changelog = _run(t_env, NESTED)
    assert _final(changelog) == plain == [(2, 1, 2), (3, 2, 6)]
    if size == "1000":  # one mini-batch: each key once, in Flink's buffer order
        assert [kind for kind, _ in changelog] == [RowKind.INSERT] * 2


def test_a_distinct_call_falls_back_to_one_phase_with_the_same_result(monkeypatch) -> None:
    query = "SELECT page, COUNT(DISTINCT who) AS visitors, COUNT(*) AS hits FROM clicks " \
            "GROUP BY page"
    plain = _final(_run(_environment(monkeypatch), query))
    t_env = _environment(monkeypatch, **ENABLED, **{
        "table.exec.mini-batch.size": "2", "table.optimizer.agg-phase-strategy": "TWO_PHASE"})
    assert _final(_run(t_env, query)) == plain == [("cart", 2, 2), ("home", 3, 5),
                                                   ("pay", 1, 1)]
