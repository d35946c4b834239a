import collections
import os
import subprocess
import sys

from hypothesis import given
from hypothesis import strategies as st

from flintlock.runtime.state.keygroups import (
    KeyGroupRange,
    assign_key_to_operator,
    assign_to_key_group,
    operator_index_for_key_group,
)

KEYS = st.one_of(
    st.integers(), st.text(), st.binary(), st.tuples(st.text(), st.integers()), st.none()
)


@given(KEYS, st.integers(min_value=1, max_value=32768))
def test_key_group_in_range(key, max_parallelism):
    assert 0 <= assign_to_key_group(key, max_parallelism) < max_parallelism


@given(st.integers(min_value=1, max_value=1024), st.data())
def test_ranges_partition_all_key_groups(max_parallelism, data):
    parallelism = data.draw(st.integers(min_value=1, max_value=max_parallelism))
    seen = []
    for index in range(parallelism):
        key_groups = KeyGroupRange.for_subtask(max_parallelism, parallelism, index)
        for group in key_groups:
            assert operator_index_for_key_group(group, max_parallelism, parallelism) == index
        seen.extend(key_groups)
    assert seen == list(range(max_parallelism))


def test_hash_is_the_same_in_another_process_with_another_hash_seed():
    keys = ["apple", "banana", ("k", 3), b"raw", 12345, "ünïcode"]
    here = [assign_key_to_operator(k, 128, 7) for k in keys]
    code = (
        "from flintlock.runtime.state.keygroups import assign_key_to_operator as a;"
        f"print([a(k, 128, 7) for k in {keys!r}])"
    )
    for seed in ("1", "999"):
        env = dict(os.environ, PYTHONHASHSEED=seed)
        out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
        assert out.stdout.strip() == str(here), out.stderr


def test_keys_spread_over_operators():
    counts = [0, 0, 0, 0]
    for i in range(4000):
        counts[assign_key_to_operator(f"word-{i}", 128, 4)] += 1
    assert min(counts) > 700


def test_keys_differing_in_one_character_do_not_share_a_group():
    groups = {assign_to_key_group(f"ds{i}#0.0", 2) for i in range(8)}
    assert groups == {0, 1}


def test_multiples_of_the_max_parallelism_spread():
    counts = collections.Counter(assign_to_key_group(i * 128, 128) for i in range(12_800))
    assert len(counts) == 128 and max(counts.values()) < 2 * 100


def test_equal_numbers_of_different_types_share_a_group():
    assert assign_to_key_group(7, 128) == assign_to_key_group(7.0, 128)
    assert assign_to_key_group(1, 128) == assign_to_key_group(True, 128)
