"""Operator descriptions: shape checks, Flink's aggregation semantics, the print format."""

import functools
from typing import Any

import cloudpickle
import pytest
from hypothesis import given
from hypothesis import strategies as st

from flintlock.common import Row, RowKind, Types
from flintlock.common.aggregation import _general_reduce
from flintlock.common.operator_spec import (
    Aggregation,
    AggregationKind,
    CollectionSource,
    OperatorKind,
    OperatorSpec,
    PrintSink,
)


def run(aggregation: Aggregation, records: list[Any]) -> list[Any]:
    """What a keyed aggregation emits for one key: the accumulator after every record."""
    outputs, accumulator = [], None
    for index, record in enumerate(records):
        accumulator = record if index == 0 else aggregation.reduce(accumulator, record)
        outputs.append(accumulator)
    return outputs


def test_kinds_know_their_inputs_and_keyedness() -> None:
    assert OperatorKind.SOURCE.num_inputs == 0
    assert OperatorKind.MAP.num_inputs == 1
    assert OperatorKind.KEYED_CO_PROCESS.num_inputs == 2
    assert OperatorKind.REDUCE.always_keyed and not OperatorKind.MAP.always_keyed


@pytest.mark.parametrize(("arguments", "problem"), [
    ({"kind": OperatorKind.SOURCE}, "needs `source`"),
    ({"kind": OperatorKind.SINK}, "needs `sink`"),
    ({"kind": OperatorKind.MAP}, "needs `function`"),
    ({"kind": OperatorKind.AGGREGATION, "keyed": True}, "needs `aggregation`"),
    ({"kind": OperatorKind.REDUCE, "function": max}, "always keyed"),
])
def test_incomplete_descriptions_are_rejected(arguments: dict[str, Any], problem: str) -> None:
    with pytest.raises(ValueError, match=problem):
        OperatorSpec(**arguments)


def test_descriptions_round_trip_through_cloudpickle() -> None:
    spec = OperatorSpec(OperatorKind.MAP, function=lambda v: v + 1, output_type=Types.INT())
    copy = cloudpickle.loads(cloudpickle.dumps(spec))
    assert copy.function(1) == 2 and copy.output_type == Types.INT()
    source = OperatorSpec(OperatorKind.SOURCE, source=CollectionSource((1, 2)))
    assert cloudpickle.loads(cloudpickle.dumps(source)) == source


def test_sum_keeps_the_other_fields_of_the_first_record() -> None:
    assert run(Aggregation(AggregationKind.SUM, 1), [("a", 1), ("b", 2), ("c", 3)]) == [
        ("a", 1), ("a", 3), ("a", 6)]


def test_min_and_max_replace_only_the_field() -> None:
    records = [("a", 5), ("b", 3), ("c", 9)]
    assert run(Aggregation(AggregationKind.MIN, 1), records) == [("a", 5), ("a", 3), ("a", 3)]
    assert run(Aggregation(AggregationKind.MAX, 1), records) == [("a", 5), ("a", 5), ("a", 9)]


def test_min_by_and_max_by_keep_the_whole_record_and_the_first_on_ties() -> None:
    records = [("a", 5), ("b", 3), ("c", 3), ("d", 9)]
    assert run(Aggregation(AggregationKind.MIN_BY, 1), records)[-1] == ("b", 3)
    assert run(Aggregation(AggregationKind.MAX_BY, 1), records)[-1] == ("d", 9)
    assert run(Aggregation(AggregationKind.MAX_BY, 1), [("a", 1), ("b", 1)])[-1] == ("a", 1)


def test_rows_are_aggregated_by_name_and_copied() -> None:
    first = Row(word="a", count=1)
    first.set_row_kind(RowKind.UPDATE_AFTER)
    result = Aggregation(AggregationKind.SUM, "count").reduce(first, Row(word="b", count=2))
    expected = Row(word="a", count=3)
    expected.set_row_kind(RowKind.UPDATE_AFTER)
    assert result == expected
    assert first.count == 1


def test_lists_and_dicts_are_copied_not_mutated() -> None:
    record = [1, 10]
    assert Aggregation(AggregationKind.SUM, 1).reduce(record, [2, 5]) == [1, 15]
    assert record == [1, 10]
    assert Aggregation(AggregationKind.MAX, "n").reduce({"n": 1}, {"n": 4}) == {"n": 4}


def test_scalars_aggregate_as_themselves() -> None:
    assert run(Aggregation(AggregationKind.SUM), [1, 2, 3]) == [1, 3, 6]
    with pytest.raises(TypeError, match="scalar"):
        Aggregation(AggregationKind.SUM, 1).reduce(1, 2)


@given(st.lists(st.integers(min_value=-1000, max_value=1000), min_size=1, max_size=30))
def test_aggregations_agree_with_python_on_any_sequence(values: list[int]) -> None:
    records = [(str(index), value) for index, value in enumerate(values)]
    assert run(Aggregation(AggregationKind.SUM, 1), records)[-1] == ("0", sum(values))
    assert run(Aggregation(AggregationKind.MIN, 1), records)[-1] == ("0", min(values))
    assert run(Aggregation(AggregationKind.MAX, 1), records)[-1] == ("0", max(values))
    first_min = min(records, key=lambda record: record[1])
    assert run(Aggregation(AggregationKind.MIN_BY, 1), records)[-1] == first_min
    first_max = functools.reduce(lambda a, b: b if b[1] > a[1] else a, records)
    assert run(Aggregation(AggregationKind.MAX_BY, 1), records)[-1] == first_max


@pytest.mark.parametrize(("sink", "subtask", "parallelism", "line"), [
    (PrintSink(), 0, 1, "hello"),
    (PrintSink(), 1, 2, "2> hello"),
    (PrintSink("words"), 0, 1, "words> hello"),
    (PrintSink("words"), 2, 4, "words:3> hello"),
])
def test_print_format_follows_flink(sink: PrintSink, subtask: int, parallelism: int,
                                    line: str) -> None:
    assert sink.format("hello", subtask, parallelism) == line


def test_rows_of_a_declared_row_type_print_with_their_kind() -> None:
    row = Row(1, "a")
    # Java's Row.toString, as real PyFlink prints it (tests/parity/expected/print_formats.txt)
    assert PrintSink().format(row, 0, 1, Types.ROW([Types.INT(), Types.STRING()])) == "+I[1,a]"
    assert PrintSink().format(row, 0, 1) == "<Row(1, 'a')>"


@given(st.sampled_from(list(AggregationKind)),
       st.lists(st.tuples(st.text(max_size=2), st.integers(-50, 50), st.integers(-50, 50)),
                min_size=1, max_size=12),
       st.integers(0, 2))
def test_the_fast_tuple_and_scalar_paths_agree_with_the_general_path(
        kind: AggregationKind, records: list[tuple[str, int, int]], position: int) -> None:
    fast = Aggregation(kind, position)
    general = functools.partial(_general_reduce, kind, position)
    expected = run_with(general, records)
    assert run(fast, records) == expected
    assert all(type(item) is tuple for item in run(fast, records))
    scalars = [record[1] for record in records]
    assert run(Aggregation(kind, 0), scalars) == run_with(
        functools.partial(_general_reduce, kind, 0), scalars)


def run_with(reduce: Any, records: list[Any]) -> list[Any]:
    outputs, accumulator = [], None
    for index, record in enumerate(records):
        accumulator = record if index == 0 else reduce(accumulator, record)
        outputs.append(accumulator)
    return outputs


def test_an_aggregation_pickles_without_its_specialised_reducers() -> None:
    import pickle

    aggregation = Aggregation(AggregationKind.SUM, 1)
    aggregation.reduce(("a", 1), ("a", 2))
    copy = pickle.loads(pickle.dumps(aggregation))
    assert copy == aggregation and copy.reduce(("a", 1), ("a", 2)) == ("a", 3)
