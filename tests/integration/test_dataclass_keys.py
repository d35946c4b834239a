"""Keyed state under dataclass keys survives a savepoint restored at another parallelism, on
TaskManager threads (issue 14).

The first job builds each key as ``Point(word, word)`` (one string object twice), the resumed one
as ``Point(word, copy_of_word)`` (two equal objects): the keys are equal, but their pickles
differ, which is what the key groups once hashed. Every key's count must go on from where the
savepoint left it, in whichever subtask of the new parallelism now owns its key group. The
first job's numbers hold at a gate (half of them read) until its savepoint was taken; the
resumed job reads the other half."""

import pytest

from flintlock.common.job_status import JobStatus
from flintlock.common.key_encoding import UnstableKeyError
from flintlock.testing.environments import local_environment
from flintlock.testing.gates import FileGate, gated_numbers
from tests.unit.state.key_recipes import Point

WORDS = [f"word-{i}" for i in range(10)]


def _word_of(x):
    return (WORDS[x % len(WORDS)], 1)


def _one_object_twice(record):
    return Point(record[0], record[0])


def _two_equal_objects(record):
    return Point(record[0], "".join(list(record[0])))


def _counts(numbers, key_selector):
    return (numbers.map(_word_of).key_by(key_selector)
            .reduce(lambda a, b: (a[0], a[1] + b[1])))


@pytest.mark.slow
def test_dataclass_keys_keep_their_state_when_restored_at_another_parallelism(executor,
                                                                           tmp_path):
    assert _one_object_twice(("ab", 1)) == _two_equal_objects(("ab", 1))
    n = 3000
    gate = FileGate(tmp_path / "gate")
    env = local_environment(tmp_path, 2, restart_attempts=3)
    env.enable_checkpointing(1000)
    _counts(gated_numbers(env, gate, n, before_gate=n // 4), _one_object_twice).print()
    client = env.execute_async("first half")
    gate.wait_arrived(60)  # each of the two readers holds after a quarter
    assert client.jm.wait_until_running(60)
    path = client.stop_with_savepoint(savepoint_directory=str(tmp_path / "sp")).result(60)
    assert client.jm.wait_for_status({JobStatus.FINISHED}, 60)

    gate.open()
    env2 = local_environment(tmp_path / "second", 3, restart_attempts=3,
                             options={"execution.state-recovery.path": path})
    resumed = _counts(gated_numbers(env2, gate, n), _two_equal_objects)
    final = {}
    for word, count in resumed.execute_and_collect():
        final[word] = max(count, final.get(word, 0))
    assert final == {word: n // len(WORDS) for word in WORDS}


class CaseInsensitive:
    """A key class with its own equality: nothing says how to hash it stably."""

    def __init__(self, name):
        self.name = name

    def __eq__(self, other):
        return isinstance(other, CaseInsensitive) and self.name.lower() == other.name.lower()

    def __hash__(self):
        return hash(self.name.lower())


@pytest.mark.parametrize("parallelism", [1, 2])
def test_a_key_without_a_stable_hash_fails_the_job_with_a_typed_error(executor, tmp_path,
                                                                     parallelism):
    env = local_environment(tmp_path, parallelism)
    (env.from_collection(["a", "B", "b"]).key_by(CaseInsensitive)
     .map(lambda name: name.lower()).name("lower").print())
    with pytest.raises(Exception) as info:
        env.execute("unstable keys")
    cause = info.value.__cause__
    assert isinstance(cause, UnstableKeyError), repr(cause)
    assert f"gave a key of type {__name__}.CaseInsensitive, which cannot be hashed" in str(cause)
    assert "CaseInsensitive defines its own __eq__" in str(cause)
