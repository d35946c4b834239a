"""Side outputs: ``yield (tag, value)`` (PyFlink's idiom) and ``ctx.output(tag, value)``,
read with ``get_side_output``; chained or across an exchange; a tag nobody reads drops."""

import collections

import pytest

from flintlock.common import Types
from flintlock.common.config import Configuration
from flintlock.datastream import OutputTag, StreamExecutionEnvironment
from flintlock.datastream.functions import KeyedProcessFunction, ProcessFunction
from flintlock.testing.executor import use_thread_executor

ODD = OutputTag("odd", Types.INT())
LARGE = OutputTag("large")
UNREAD = OutputTag("unread")


class Split(ProcessFunction):
    def process_element(self, value, ctx):
        if value % 2:
            yield ODD, value
        else:
            yield value
        if value >= 8:
            ctx.output(LARGE, ("large", value))
        yield UNREAD, "nobody reads this"


class CountOdd(KeyedProcessFunction):
    def process_element(self, value, ctx):
        yield ODD, (ctx.get_current_key(), value)
        yield value


@pytest.fixture
def env(monkeypatch, tmp_path):
    use_thread_executor(monkeypatch)
    config = Configuration({"execution.checkpointing.dir": str(tmp_path)})
    environment = StreamExecutionEnvironment.get_execution_environment(config)
    environment.set_parallelism(2)
    return environment


def _run(streams):
    """Runs several collect sinks of one job: each stream tagged, then split again."""
    first, *rest = streams
    tagged = first[1].map(lambda v, n=first[0]: (n, v))
    for name, stream in rest:
        tagged = tagged.union(stream.map(lambda v, n=name: (n, v)))
    results = collections.defaultdict(list)
    for name, value in tagged.execute_and_collect():
        results[name].append(value)
    return {name: sorted(values) for name, values in results.items()}


def test_yielded_and_ctx_side_outputs_reach_their_streams(env):
    parsed = env.from_collection(list(range(10))).process(Split(), output_type=Types.INT())
    got = _run([("main", parsed), ("odd", parsed.get_side_output(ODD)),
                ("large", parsed.get_side_output(LARGE))])
    assert got == {"main": [0, 2, 4, 6, 8], "odd": [1, 3, 5, 7, 9],
                   "large": [("large", 8), ("large", 9)]}


def test_side_output_of_a_keyed_process_crosses_an_exchange(env):
    keyed = env.from_collection(list(range(20))).key_by(lambda v: v % 3).process(CountOdd())
    side = keyed.get_side_output(ODD).key_by(lambda p: p[0]).map(lambda p: p[1])
    got = _run([("main", keyed), ("side", side)])
    assert got == {"main": list(range(20)), "side": list(range(20))}


def test_get_side_output_needs_an_output_tag(env):
    parsed = env.from_collection([1]).process(Split())
    with pytest.raises(TypeError):
        parsed.get_side_output("odd")
