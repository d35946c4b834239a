"""Declared output types end to end, TaskManagers as threads of this process (issue 20).

A record that does not fit its operator's declared type fails the job with
``RecordTypeMismatchError`` naming the operator, the type and the value wherever the record
leaves its operator: to a chained operator that then fails on it, across a keyed exchange
(the record writer's typed codec), into a chained sink. PyFlink's conversions (an int for a
DOUBLE arrives as a float, a list for a TUPLE as a tuple, a tuple for a ROW as a ``Row``)
happen across an exchange and into a chained sink alike, and declaring types changes no result.
Each test checks the job's chaining, so it shows the edge it claims to.

See tests/integration/test_api_types.py for the conversions inside a chain and the location
of a wrong field inside a row.
"""

import pytest

from flintlock.common import Row, Types, WatermarkStrategy
from flintlock.common.serialization import Encoder
from flintlock.common.typeinfo_base import RecordTypeMismatchError
from flintlock.datastream.connectors.file_system import (
    BucketAssigner,
    FileSink,
    OutputFileConfig,
)
from flintlock.datastream.connectors.number_seq import NumberSequenceSource
from flintlock.runtime.jobmanager import JobFailedError
from flintlock.testing.environments import local_environment

LONG, STRING = Types.LONG(), Types.STRING()
PAIR = Types.TUPLE([LONG, LONG])
SOURCE = "Collection Source"
COLLECT = "Data stream collect sink"


@pytest.fixture
def chains(executor, monkeypatch):
    """For each job the executor starts, its vertices as lists of operator names."""
    started = []
    start = executor._start

    def recording_start(*args, **kwargs):
        handle = start(*args, **kwargs)
        started.append([[op.name for op in vertex.operators]
                        for vertex in handle.jm.job_graph.vertices])
        return handle

    monkeypatch.setattr(executor, "_start", recording_start)
    return started


def _env(tmp_path, parallelism):
    return local_environment(tmp_path, parallelism)  # no restarts: the first failure is final


def _mismatch(run):
    """Runs a job that must fail on a declared type; returns the ``RecordTypeMismatchError``
    that failed it (``execute`` and ``execute_and_collect`` raise ``JobFailedError`` with the
    failure that ended the job as its cause)."""
    with pytest.raises(JobFailedError) as info:
        run()
    assert isinstance(info.value.__cause__, RecordTypeMismatchError), repr(info.value)
    return info.value.__cause__


def _assert_names(mismatch, operator, declared, value):
    assert mismatch.operator == operator
    assert mismatch.declared == repr(declared)
    assert mismatch.value == f"{value!r} ({type(value).__name__})"
    assert f"operator {operator!r}" in str(mismatch) and repr(declared) in str(mismatch)


# -- a mismatch between two chained operators ------------------------------------------------

def test_a_mismatch_in_a_chain_is_reported_instead_of_the_successors_error(
        executor, chains, tmp_path):
    env = _env(tmp_path, 1)
    (env.from_collection([1, 2, 3])
        .map(lambda x: ("a", x) if x == 2 else (x, x), output_type=PAIR).name("pairs")
        .map(lambda pair: pair[0] + pair[1]).name("add")
        .print())
    mismatch = _mismatch(lambda: env.execute("chained mismatch"))
    assert chains == [[[SOURCE, "pairs", "add", "Print to Std. Out"]]]
    _assert_names(mismatch, "pairs", PAIR, ("a", 2))
    # the successor's TypeError is the cause; across the RPC from the TaskManager the cause
    # is the remote traceback, which shows it
    remote = mismatch.__cause__.text
    assert "TypeError: can only concatenate str" in remote
    assert remote.index("TypeError") < remote.index("direct cause") < remote.index(
        "RecordTypeMismatchError")


def _fail_on_two(pair):
    if pair[0] == 2:
        raise ValueError(f"cannot handle {pair[0]}")
    return pair


@pytest.mark.parametrize("declared, produce", [
    pytest.param(PAIR, lambda x: (x, x), id="tuples"),
    pytest.param(PAIR, lambda x: [x, x], id="lists for a TUPLE"),
    pytest.param(Types.TUPLE([Types.DOUBLE(), LONG]), lambda x: (x, x), id="ints for a DOUBLE"),
    pytest.param(Types.ROW([LONG, LONG]), lambda x: (x, x), id="tuples for a ROW"),
])
def test_a_successors_own_error_is_not_blamed_on_records_that_fit(
        executor, chains, tmp_path, declared, produce):
    env = _env(tmp_path, 1)
    (env.from_collection([1, 2, 3])
        .map(produce, output_type=declared).name("pairs")
        .map(_fail_on_two).name("picky")
        .print())
    with pytest.raises(JobFailedError) as info:
        env.execute("own error")
    assert chains == [[[SOURCE, "pairs", "picky", "Print to Std. Out"]]]
    assert type(info.value.__cause__) is ValueError
    assert str(info.value.__cause__) == "cannot handle 2"


# -- a mismatch across a keyed exchange ------------------------------------------------------

@pytest.mark.parametrize("declared, produce, bad", [
    pytest.param(PAIR, lambda x: ("a", 1) if x == 2 else (x, 1), ("a", 1), id="rows layout"),
    pytest.param(Types.TUPLE([STRING, LONG]), lambda x: (str(x), "1" if x == 2 else 1),
                 ("2", "1"), id="columns layout"),
    pytest.param(Types.ROW([LONG, LONG]), lambda x: (x, {1: None, 2: "1"}.get(x, x)),
                 Row(f0=2, f1="1"), id="pickled ROW, None allowed"),
    pytest.param(PAIR, lambda x: x if x == 2 else (x, 1), 2,
                 id="the key selector fails on it (int is not subscriptable)"),
])
def test_a_mismatch_across_a_keyed_exchange_fails_the_job(
        executor, chains, tmp_path, declared, produce, bad):
    env = _env(tmp_path, 2)
    (env.from_collection([1, 2, 3])
        .map(produce, output_type=declared).name("pairs")
        .key_by(lambda pair: pair[0])
        .reduce(lambda a, b: (a[0], a[1] + b[1])).name("count")
        .print())
    mismatch = _mismatch(lambda: env.execute("keyed mismatch"))
    assert chains == [[[SOURCE], ["pairs"], ["count", "Print to Std. Out"]]]
    _assert_names(mismatch, "pairs", declared, bad)


# -- a mismatch into a chained sink ----------------------------------------------------------

def _file_sink(path):
    return (FileSink.for_row_format(str(path), Encoder.simple_string_encoder())
            .with_bucket_assigner(BucketAssigner.base_path_bucket_assigner())
            .with_output_file_config(OutputFileConfig.builder().with_part_suffix(".txt").build())
            .build())


def _print(env, stream, tmp_path):
    stream.print()
    return lambda: env.execute("sink mismatch"), "Print to Std. Out"


def _collect(env, stream, tmp_path):
    return lambda: list(stream.execute_and_collect("sink mismatch")), COLLECT


def _file(env, stream, tmp_path):
    stream.sink_to(_file_sink(tmp_path / "out"))
    return lambda: env.execute("sink mismatch"), "FileSink"


@pytest.mark.parametrize("sink", [_print, _collect, _file], ids=["print", "collect", "file"])
@pytest.mark.parametrize("declared, produce, bad", [
    pytest.param(LONG, lambda x: str(x) if x == 2 else x, "2", id="str for LONG"),
    pytest.param(Types.TUPLE([STRING, Types.DOUBLE()]),
                 lambda x: (str(x), "2.0") if x == 2 else (str(x), x), ("2", "2.0"),
                 id="columns layout"),
    pytest.param(PAIR, lambda x: (x, 2**63) if x == 2 else (x, x), (2, 2**63),
                 id="rows layout, out of range"),
    pytest.param(Types.LIST(LONG), lambda x: [x, None] if x == 2 else [x], [2, None],
                 id="pickled LIST"),
])
def test_a_mismatch_into_a_chained_sink_fails_the_job(
        executor, chains, tmp_path, sink, declared, produce, bad):
    env = _env(tmp_path, 1)
    stream = env.from_collection([1, 2, 3]).map(produce, output_type=declared).name("produce")
    run, sink_name = sink(env, stream, tmp_path)
    mismatch = _mismatch(run)
    assert chains == [[[SOURCE, "produce", sink_name]]]
    _assert_names(mismatch, "produce", declared, bad)


# -- conversions -----------------------------------------------------------------------------

CONVERSIONS = [
    # (declared type, function, what arrives for 1, 2, 3)
    pytest.param(Types.DOUBLE(), lambda x: x, [1.0, 2.0, 3.0], id="int for DOUBLE"),
    pytest.param(Types.FLOAT(), lambda x: x / 10, [0.10000000149011612, 0.20000000298023224,
                                                   0.30000001192092896], id="FLOAT rounded"),
    pytest.param(Types.TUPLE([LONG, Types.DOUBLE()]), lambda x: [x, x],
                 [(1, 1.0), (2, 2.0), (3, 3.0)], id="list for TUPLE (rows)"),
    pytest.param(Types.TUPLE([STRING, LONG]), lambda x: [str(x), x],
                 [("1", 1), ("2", 2), ("3", 3)], id="list for TUPLE (columns)"),
    pytest.param(Types.ROW_NAMED(["word", "n"], [STRING, LONG]), lambda x: (str(x), x),
                 [Row(word=str(x), n=x) for x in (1, 2, 3)], id="tuple for ROW"),
    pytest.param(Types.ROW_NAMED(["n", "x"], [LONG, Types.DOUBLE()]), lambda x: Row(x, x),
                 [Row(n=x, x=float(x)) for x in (1, 2, 3)], id="int for a ROW's DOUBLE"),
    pytest.param(Types.LIST(Types.DOUBLE()), lambda x: [x, 0.5],
                 [[float(x), 0.5] for x in (1, 2, 3)], id="int for a LIST's DOUBLE"),
]


def _same_types(values):
    """Each value's type, and for tuples, rows and lists the types of their items (1 == 1.0,
    so equality alone cannot tell whether an int became a float)."""
    return [(type(value).__name__, tuple(type(item).__name__ for item in value))
            if isinstance(value, (tuple, list, Row)) else type(value).__name__
            for value in values]


@pytest.mark.parametrize("route", ["exchange", "chained sink"])
@pytest.mark.parametrize("declared, convert, expected", CONVERSIONS)
def test_pyflinks_conversions_happen_across_an_exchange_and_into_a_chained_sink(
        executor, chains, tmp_path, route, declared, convert, expected):
    env = _env(tmp_path, 2 if route == "exchange" else 1)
    out = list(env.from_collection([1, 2, 3]).map(convert, output_type=declared).name("convert")
               .execute_and_collect())
    if route == "exchange":
        assert chains == [[[SOURCE], ["convert"], [COLLECT]]]
    else:
        assert chains == [[[SOURCE, "convert", COLLECT]]]
    out.sort(key=lambda value: value[0] if isinstance(value, (tuple, Row)) else value)
    assert out == expected
    assert _same_types(out) == _same_types(expected)


# -- declared types change no result ---------------------------------------------------------

N, K = 3_000, 7


def _running_count(tmp_path, declared):
    env = _env(tmp_path / ("typed" if declared else "untyped"), 2)
    numbers = env.from_source(NumberSequenceSource(0, N - 1),
                              WatermarkStrategy.no_watermarks(), "numbers")
    pairs = numbers.map(lambda i: (i % K, 1), output_type=PAIR if declared else None)
    counts = (pairs.key_by(lambda pair: pair[0], key_type=LONG if declared else None)
              .reduce(lambda a, b: (a[0], a[1] + b[1])))
    return sorted(counts.execute_and_collect())


def test_a_keyed_running_count_gives_the_same_results_with_and_without_declared_types(
        executor, chains, tmp_path):
    typed = _running_count(tmp_path, declared=True)
    untyped = _running_count(tmp_path, declared=False)
    assert chains[0] == chains[1] and len(chains[0]) == 3  # source+map, reduce, collect
    expected = sorted((key, count) for key in range(K)
                      for count in range(1, len(range(key, N, K)) + 1))
    assert typed == untyped == expected
    assert {type(field) for pair in typed for field in pair} == {int}
