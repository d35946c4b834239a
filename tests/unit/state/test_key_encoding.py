"""The canonical key encoding (``flintlock.common.key_encoding``): keys that compare equal hash
alike in every process and under every PYTHONHASHSEED, the encodings savepoints depend on do not
change, and a key without a stable hash is a typed error, never a fallback."""

import collections
import dataclasses
import datetime
import enum
import json
import os
import pickle
import subprocess
import sys
import uuid
import zoneinfo
from decimal import Decimal
from fractions import Fraction

import pytest
from hypothesis import HealthCheck, Phase, find, given, settings
from hypothesis import strategies as st

from flintlock.common.key_encoding import UnstableKeyError, check_key_type, stable_hash
from flintlock.common.operator_spec import UnhashableKeyError, check_key
from flintlock.common.time import Instant
from flintlock.common.typeinfo import Types
from flintlock.common.types import Row, RowKind
from flintlock.runtime.state.keygroups import assign_to_key_group, key_group_index
from tests.unit.state.key_recipes import EQUAL_PAIRS, Colour, Pair, Point, build

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(__file__))))
UTC = datetime.UTC

# stable_hash of keys whose encoding predates the canonical encoding of every type, computed
# by the code of the first release: savepoints taken by it keep their key groups.
RELEASED_HASHES = [
    ("apple", 2838417488),
    ("ünïcode", 248075434),
    ("", 0),
    (0, 1696784233),
    (1, 2844319735),
    (-1, 558161692),
    (2**63 - 1, 3439090748),
    (-(2**63), 2291817545),
    (2**64, 2433623096),
    (-(2**100), 2999563422),
    (True, 2844319735),
    (False, 1696784233),
    (None, 3523407757),
    (b"raw", 447994709),
    (bytearray(b"raw"), 447994709),
    (1.5, 2270993338),
    (-0.25, 2252873649),
    (7.0, 1877464688),
    (float("inf"), 3890785273),
    (1e300, 343655837),
    (("k", 3), 4021892040),
    (["k", 3], 4021892040),
    ((("a", b"b"), [None, 2.5]), 379862210),
    ((), 3887548279),
    (Decimal("0.1"), 3163248294),
    (Decimal("-12.345"), 988304819),
    (datetime.date(2024, 2, 29), 107932596),
    (datetime.datetime(2024, 2, 29, 13, 5, 7, 123), 1564160107),
    (datetime.datetime(2024, 2, 29, 13, tzinfo=UTC), 1901720350),
    (datetime.time(8, 30), 750189851),
    (datetime.time(8, 30, tzinfo=UTC), 1539257872),
    (datetime.timedelta(days=2, seconds=5), 1307002370),
]


@pytest.mark.parametrize(("key", "released"), RELEASED_HASHES, ids=repr)
def test_encodings_savepoints_depend_on_are_unchanged(key, released):
    assert stable_hash(key) == released


def test_the_int_fast_path_agrees_with_stable_hash():
    for key in (0, 1, -1, 2**63 - 1, -(2**63), 123_456_789):
        assert key_group_index(key, 32768) == key_group_index(Decimal(key), 32768)


@dataclasses.dataclass(frozen=True)
class Key:
    a: str
    b: str


EQUAL_KEYS = {
    "issue: a dataclass with a shared vs. an equal string": [
        Key("ab" * 3, "".join(["ab"] * 3)), Key("ababab", "ababab")],
    "one": [1, 1.0, True, Decimal("1"), Decimal("1.000"), Decimal("1E0"), Fraction(1),
            complex(1, 0)],
    "zero": [0, -0.0, False, Decimal("-0"), Decimal("0E+5"), Fraction(0), complex(-0.0, 0)],
    "a half": [0.5, Decimal("0.5"), Decimal("0.50"), Fraction(1, 2), complex(0.5, -0.0)],
    "a tenth (no float)": [Decimal("0.1"), Decimal("0.100"), Fraction(1, 10)],
    "a third": [Fraction(1, 3), Fraction(2, 6)],
    "huge decimals": [Decimal("1E+10001"), Decimal("10E+10000"), Decimal("1.000E+10001")],
    "a huge decimal and its int": [Decimal("1E+10000"), Decimal("10E+9999"), 10**10000],
    "infinity": [float("inf"), Decimal("Infinity")],
    "complex": [complex(1, 2), complex(1.0, 2.0)],
    "named tuple": [(1, "x"), Pair(1, "x")],
    "frozenset": [frozenset({"a", "b", "c"}), frozenset(["c", "b", "a"]), {"b", "a", "c"}],
    "dict": [{"a": 1, "b": 2}, {"b": 2.0, "a": 1}],
    "instant in two zones": [
        datetime.datetime(2020, 1, 1, 12, tzinfo=UTC),
        datetime.datetime(2020, 1, 1, 13, tzinfo=zoneinfo.ZoneInfo("Europe/Paris"))],
    "fold": [datetime.datetime(2020, 1, 1, 12), datetime.datetime(2020, 1, 1, 12, fold=1)],
    "aware time": [datetime.time(12, tzinfo=datetime.timezone(datetime.timedelta(hours=1))),
                   datetime.time(11, tzinfo=UTC)],
    "aware time across midnight": [
        datetime.time(0, 30, tzinfo=datetime.timezone(datetime.timedelta(hours=1))),
        datetime.time(1, 30, tzinfo=datetime.timezone(datetime.timedelta(hours=2)))],
    "rows in another field order": [Row(a=1, b="x"), Row(b="x", a=1)],
    "str enum": ["red", enum.StrEnum("E", {"RED": "red"}).RED],
    "int enum": [3, enum.IntEnum("I", {"THREE": 3}).THREE],
}


@pytest.mark.parametrize("name", list(EQUAL_KEYS))
def test_equal_keys_hash_alike(name):
    keys = EQUAL_KEYS[name]
    assert all(key == keys[0] for key in keys)
    assert len({stable_hash(key) for key in keys}) == 1


def test_numpy_scalars_hash_as_their_python_values():
    import numpy as np  # in the test extra: keys often come out of NumPy/pandas code
    assert stable_hash(np.int64(5)) == stable_hash(5)
    assert stable_hash(np.float64(0.5)) == stable_hash(np.float32(0.5)) == stable_hash(0.5)
    assert stable_hash(np.str_("a")) == stable_hash("a")


def _deleted(row):
    row.set_row_kind(RowKind.DELETE)
    return row


@pytest.mark.parametrize("keys", [
    (Point(1, 2), Point(2, 1), (1, 2)),
    (Colour.RED, Colour.BLUE, "red", 3),
    (Row(1, 2), Row(a=1, b=2), _deleted(Row(1, 2)), (1, 2)),
    (uuid.UUID(int=1), uuid.UUID(int=2)),
    (Instant(1, 2), Instant(2, 1)),
    (frozenset({1, 2}), frozenset({1, 3}), (1, 2)),
], ids=repr)
def test_unequal_keys_of_new_encodings_differ(keys):
    assert len({stable_hash(key) for key in keys}) == len(keys)


def test_a_dataclass_hashes_only_the_fields_its_eq_compares():
    @dataclasses.dataclass(frozen=True)
    class Tagged:
        id: int
        note: str = dataclasses.field(compare=False)

    assert Tagged(1, "a") == Tagged(1, "b")
    assert stable_hash(Tagged(1, "a")) == stable_hash(Tagged(1, "b"))
    assert stable_hash(Tagged(1, "a")) != stable_hash(Tagged(2, "a"))


def test_a_subclass_of_a_dataclass_is_another_key():
    @dataclasses.dataclass(frozen=True)
    class Sub(Point):
        pass

    assert Sub(1, 2) != Point(1, 2)
    assert stable_hash(Sub(1, 2)) != stable_hash(Point(1, 2))


class OwnEquality:
    def __init__(self, name):
        self.name = name

    def __eq__(self, other):
        return isinstance(other, OwnEquality) and self.name.lower() == other.name.lower()

    def __hash__(self):
        return hash(self.name.lower())


@dataclasses.dataclass(frozen=True)
class DataclassWithOwnEquality:
    name: str

    def __eq__(self, other):
        return isinstance(other, DataclassWithOwnEquality) and self.name.lower() == other.name


@dataclasses.dataclass(frozen=True, eq=False)
class IdentityDataclass:
    name: str


class Plain:
    pass


@pytest.mark.parametrize(("key", "reason"), [
    (OwnEquality("a"), "OwnEquality defines its own __eq__"),
    (DataclassWithOwnEquality("a"), "DataclassWithOwnEquality defines its own __eq__"),
    (IdentityDataclass("a"), "compares by identity"),
    (Plain(), "compares by identity"),
    (("ok", Plain()), "compares by identity"),
    (frozenset({Plain()}), "compares by identity"),
    (Point(1, OwnEquality("a")), "defines its own __eq__"),
], ids=lambda value: type(value).__name__)
def test_a_key_without_a_stable_hash_is_a_typed_error_never_a_fallback(key, reason):
    with pytest.raises(UnstableKeyError, match=reason) as caught:
        assign_to_key_group(key, 128)
    assert isinstance(caught.value, TypeError)
    assert str(caught.value).startswith("a key selector gave a key of type ")


def test_check_key_names_the_operator_and_the_type():
    with pytest.raises(UnstableKeyError) as caught:
        check_key(OwnEquality("a"), "Keyed Reduce")
    message = str(caught.value)
    assert message.startswith("the key selector of operator 'Keyed Reduce' gave a key of type "
                              f"{OwnEquality.__module__}.OwnEquality, ")
    assert "key by a str, int, bytes, tuple, named tuple, frozenset, enum or dataclass" in message
    copy = pickle.loads(pickle.dumps(caught.value))
    assert str(copy) == message and copy.where == caught.value.where


def test_check_key_accepts_every_stable_key_and_still_rejects_unhashable_ones():
    for key in (Point("a", 1), Pair(1, 2), frozenset({1}), Colour.GREEN, Row(a=1)):
        assert check_key(key, "op") is key
    with pytest.raises(UnhashableKeyError):
        check_key({"a"}, "op")


@pytest.mark.parametrize("key_type", [
    Types.MAP(Types.STRING(), Types.INT()), Types.LIST(Types.INT()),
    Types.BASIC_ARRAY(Types.INT()), Types.PRIMITIVE_ARRAY(Types.INT()),
    Types.OBJECT_ARRAY(Types.STRING()), Types.TUPLE([Types.STRING(), Types.LIST(Types.INT())]),
    Types.ROW_NAMED(["m"], [Types.MAP(Types.STRING(), Types.STRING())]),
], ids=repr)
def test_a_declared_key_type_that_can_never_be_a_key_is_refused(key_type):
    with pytest.raises(UnstableKeyError, match="is not hashable") as caught:
        check_key_type(key_type)
    assert str(caught.value).startswith("key_by() gave a key of type Types.")


@pytest.mark.parametrize("key_type", [
    None, Types.STRING(), Types.LONG(), Types.BIG_DEC(), Types.INSTANT(), Types.SQL_DATE(),
    Types.LOCAL_DATE_TIME(), Types.PICKLED_BYTE_ARRAY(),
    Types.TUPLE([Types.STRING(), Types.ROW([Types.INT(), Types.PICKLED_BYTE_ARRAY()])]),
], ids=repr)
def test_declared_key_types_with_a_stable_hash_are_accepted(key_type):
    check_key_type(key_type)


_CHILD = (
    "import json, sys\n"
    "from flintlock.runtime.state.keygroups import assign_to_key_group, stable_hash\n"
    "from tests.unit.state.key_recipes import build\n"
    "keys = [build(recipe) for recipe in json.load(sys.stdin)]\n"
    "print(json.dumps([[stable_hash(k), assign_to_key_group(k, 128)] for k in keys]))\n"
)


def _hashes_elsewhere(recipes, seeds):
    """``[stable_hash, key group]`` of each recipe's key, per PYTHONHASHSEED, each computed in
    a new process that builds the keys from the recipes itself."""
    children = [subprocess.Popen(
        [sys.executable, "-c", _CHILD], cwd=REPO, env=dict(os.environ, PYTHONHASHSEED=seed),
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for seed in seeds]
    text = json.dumps(recipes)
    results = {}
    for seed, child in zip(seeds, children, strict=True):
        out, err = child.communicate(text, timeout=60)
        assert child.returncode == 0, err
        results[seed] = json.loads(out)
    return results


@settings(max_examples=4, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(st.lists(EQUAL_PAIRS, min_size=20, max_size=40))
def test_equal_keys_share_a_key_group_in_every_process_and_hash_seed(pairs):
    recipes = [recipe for pair in pairs for recipe in pair]
    for left, right in pairs:
        assert build(left) == build(right), (left, right)
    here = [[stable_hash(key), assign_to_key_group(key, 128)] for key in map(build, recipes)]
    for seed, there in _hashes_elsewhere(recipes, ("1", "2", "3")).items():
        for recipe, mine, theirs in zip(recipes, here, there, strict=True):
            assert mine == theirs, f"PYTHONHASHSEED={seed}: {recipe}"
    for index, (left, right) in enumerate(pairs):
        assert here[2 * index] == here[2 * index + 1], (left, right)


_KINDS = ("int", "bool", "float", "decimal", "fraction", "complex", "str", "bytes", "none",
          "enum", "datetime", "tuple", "named", "dataclass", "shared", "frozenset", "row")


def _kinds(recipe) -> set[str]:
    """Every kind a recipe uses, its nested ones included."""
    found = {recipe[0]}
    if recipe[0] == "row":
        for _, field in recipe[1]:
            found |= _kinds(field)
    elif recipe[0] == "shared":
        found |= _kinds(recipe[1])
    elif recipe[0] in ("tuple", "named", "dataclass", "frozenset"):
        for item in recipe[1]:
            found |= _kinds(item)
    return found


@pytest.mark.parametrize("kind", _KINDS)
def test_the_recipes_reach_every_kind(kind):
    """The property test's generator reaches each kind. A search for an example, not a count
    over a fixed number of draws: 200 draws missed the named tuples once in a clean-clone CI
    run, and a derandomized draw still depended on which tests ran before it."""
    find(EQUAL_PAIRS, lambda pair: kind in _kinds(pair[0]) | _kinds(pair[1]),
         settings=settings(max_examples=5000, deadline=None, database=None,
                           phases=[Phase.generate]))


def test_the_recipes_build_equal_keys_differently():
    """The property test's generator gives equal keys, most of them built in different ways."""
    differently = collections.Counter()

    @settings(max_examples=200, deadline=None)
    @given(EQUAL_PAIRS)
    def draw(pair):
        left, right = pair
        assert build(left) == build(right)
        differently[left != right] += 1

    draw()
    assert differently[True] > differently[False], differently
