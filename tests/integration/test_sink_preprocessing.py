"""A sink that ``SupportsPreprocessing`` gets its input through its ``StreamTransformer`` first
(issue 27), as ``DataStream.sink_to`` does in PyFlink; other sinks get the stream as it is."""

import uuid

from flintlock.common.config import Configuration
from flintlock.datastream import StreamExecutionEnvironment
from flintlock.datastream.connectors.base import StreamTransformer, SupportsPreprocessing
from flintlock.testing.executor import use_thread_executor
from flintlock.testing.recording import CollectingSink, Recording


class TimesTen(StreamTransformer):
    def apply(self, ds):
        return ds.map(lambda value: value * 10)


class PreprocessingSink(CollectingSink, SupportsPreprocessing):
    def get_transformer(self):
        return TimesTen()


class PlainPreprocessingSink(CollectingSink, SupportsPreprocessing):
    def get_transformer(self):
        return None


def test_the_transformer_runs_before_the_sink(monkeypatch, tmp_path):
    use_thread_executor(monkeypatch)
    env = StreamExecutionEnvironment.get_execution_environment(
        Configuration({"execution.checkpointing.dir": str(tmp_path)}))
    transformed, plain = Recording(uuid.uuid4().hex), Recording(uuid.uuid4().hex)
    numbers = env.from_collection([1, 2, 3])
    numbers.sink_to(PreprocessingSink(transformed))
    numbers.sink_to(PlainPreprocessingSink(plain))
    env.execute("sink preprocessing")
    assert sorted(transformed.items()) == [10, 20, 30]
    assert sorted(plain.items()) == [1, 2, 3]
