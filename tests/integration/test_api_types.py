"""Types, Rows and run-time errors end to end (TaskManagers as threads of this process):
declared output types convert (a tuple for a ROW type becomes a Row, a list for a TUPLE a
tuple) and validate (a wrong record fails the job naming the operator); user errors,
unhashable keys and keyed state outside a keyed stream fail the job with their own type and
message.
"""

import pytest

from flintlock.common import Row, Types
from flintlock.common.operator_spec import UnhashableKeyError
from flintlock.common.typeinfo_base import RecordTypeMismatchError
from flintlock.datastream import MapFunction
from flintlock.datastream.state import ValueStateDescriptor
from flintlock.runtime.tasks.contexts import StateOutsideKeyedContextError
from flintlock.testing.environments import local_environment


def _env(tmp_path, parallelism=2):
    return local_environment(tmp_path, parallelism)


def _failure(env, job_name="failing"):
    """Runs the job, which must fail; returns the user-level cause of the failure."""
    with pytest.raises(Exception) as info:
        env.execute(job_name)
    assert job_name in str(info.value)
    assert info.value.__cause__ is not None
    return info.value, info.value.__cause__


# -- conversion and validation of declared types ----------------------------------------------


def test_map_output_type_row_converts_tuples_to_named_rows(executor, tmp_path):
    env = _env(tmp_path)
    row_type = Types.ROW_NAMED(["word", "length"], [Types.STRING(), Types.INT()])
    words = ["flink", "on", "spark"]
    out = list(env.from_collection(words).map(lambda w: (w, len(w)), output_type=row_type)
               .map(lambda r: (type(r).__name__, r.word, r["length"], r[1], r.as_dict()))
               .execute_and_collect())
    assert sorted(out) == sorted(("Row", w, len(w), len(w), {"word": w, "length": len(w)})
                                 for w in words)


def test_row_type_without_names_names_fields_f0_f1(executor, tmp_path):
    env = _env(tmp_path, parallelism=1)
    row_type = Types.ROW([Types.INT(), Types.STRING()])
    out = list(env.from_collection([1, 2]).map(lambda x: [x, str(x)], output_type=row_type)
               .execute_and_collect())
    assert out == [Row(f0=1, f1="1"), Row(f0=2, f1="2")]  # PyFlink's default field names
    assert [(r[0], r[1]) for r in out] == [(1, "1"), (2, "2")]


def test_flat_map_output_type_converts_each_output(executor, tmp_path):
    env = _env(tmp_path, parallelism=1)
    row_type = Types.ROW_NAMED(["k", "v"], [Types.STRING(), Types.LONG()])
    out = list(env.from_collection(["a", "b"])
               .flat_map(lambda s: [(s, 1), (s, 2)], output_type=row_type)
               .execute_and_collect())
    assert out == [Row(k="a", v=1), Row(k="a", v=2), Row(k="b", v=1), Row(k="b", v=2)]


def test_tuple_type_turns_lists_into_tuples(executor, tmp_path):
    env = _env(tmp_path, parallelism=1)
    tuple_type = Types.TUPLE([Types.STRING(), Types.INT()])
    out = list(env.from_collection(["x", "yy"]).map(lambda s: [s, len(s)], tuple_type)
               .execute_and_collect())
    assert out == [("x", 1), ("yy", 2)]


def test_rows_built_by_the_user_travel_between_tasks(executor, tmp_path):
    env = _env(tmp_path)
    Person = Row("name", "age")
    people = [Person("ann", 31), Person("bob", 27)]
    out = list(env.from_collection(people).rebalance()
               .map(lambda p: Row(name=p.name.upper(), age=p.age + 1)).execute_and_collect())
    assert sorted(out, key=lambda r: r.name) == [Row(name="ANN", age=32), Row(name="BOB", age=28)]


def test_declared_types_pass_matching_records(executor, tmp_path):
    env = _env(tmp_path)
    list_type = Types.LIST(Types.INT())
    map_type = Types.MAP(Types.STRING(), Types.DOUBLE())
    out = list(env.from_collection([1, 2, 3], Types.INT())
               .map(lambda x: [x] * x, list_type)
               .map(lambda xs: {str(len(xs)): float(sum(xs))}, map_type)
               .execute_and_collect())
    assert sorted(out, key=str) == [{"1": 1.0}, {"2": 4.0}, {"3": 9.0}]


def test_a_record_of_the_wrong_type_fails_the_job_naming_the_operator(executor, tmp_path):
    env = _env(tmp_path)
    env.from_collection([1, 2, 3]).map(lambda x: str(x), output_type=Types.INT()).name(
        "stringify").print()
    error, cause = _failure(env)
    assert isinstance(cause, RecordTypeMismatchError)
    assert "stringify" in str(cause) and "Types.INT()" in str(cause)
    assert "stringify" in str(error)


def test_a_wrong_field_inside_a_row_is_located(executor, tmp_path):
    env = _env(tmp_path)
    row_type = Types.ROW_NAMED(["name", "age"], [Types.STRING(), Types.INT()])
    env.from_collection(["ann"]).map(lambda s: (s, "not a number"), output_type=row_type).name(
        "people").print()
    _, cause = _failure(env)
    assert isinstance(cause, RecordTypeMismatchError)
    assert "people" in str(cause) and "age" in str(cause)


# -- errors at run time ------------------------------------------------------------------------


def _divide(x):
    if x == 2:
        raise ValueError(f"cannot handle {x}")
    return x


def test_a_user_exception_fails_the_job_with_its_type_and_message(executor, tmp_path):
    env = _env(tmp_path)
    env.from_collection([1, 2, 3]).map(_divide).print()
    error, cause = _failure(env, "user error")
    assert type(cause) is ValueError
    assert str(cause) == "cannot handle 2"
    assert "ValueError: cannot handle 2" in str(error)


def test_a_user_exception_reaches_execute_and_collect(executor, tmp_path):
    env = _env(tmp_path)
    with pytest.raises(Exception) as info:
        list(env.from_collection([1, 2, 3]).map(_divide).execute_and_collect())
    assert type(info.value.__cause__) is ValueError
    assert "cannot handle 2" in str(info.value)


@pytest.mark.parametrize("operation", ["map", "reduce", "process_sum"])
def test_an_unhashable_key_fails_with_a_clear_message(executor, tmp_path, operation):
    env = _env(tmp_path)
    keyed = env.from_collection([[1, 2], [3]]).key_by(lambda xs: xs)
    if operation == "map":
        stream = keyed.map(lambda xs: xs)
    elif operation == "reduce":
        stream = keyed.reduce(lambda a, b: a + b)
    else:
        stream = keyed.sum(0)
    stream.name("keyed op").print()
    _, cause = _failure(env)
    assert isinstance(cause, UnhashableKeyError)
    assert str(cause).startswith("the key selector of operator 'keyed op' returned [")
    assert "a list, which is not hashable" in str(cause)


class UsesKeyedState(MapFunction):
    def open(self, runtime_context):
        self.state = runtime_context.get_state(ValueStateDescriptor("count", Types.INT()))

    def map(self, value):
        return value


def test_keyed_state_outside_a_keyed_stream_fails_naming_the_operator(executor, tmp_path):
    env = _env(tmp_path)
    env.from_collection([1, 2]).map(UsesKeyedState()).name("not keyed").print()
    _, cause = _failure(env)
    assert isinstance(cause, StateOutsideKeyedContextError)
    assert str(cause) == ("operator 'not keyed' asked for keyed state 'count', but it does not "
                          "run on a keyed stream; call key_by(...) before it")
