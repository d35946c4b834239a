"""A HybridSource in a job (issue 27): a bounded file backfill, then a number sequence, read by
two source subtasks on TaskManager threads; each subtask finishes its files before it moves
on, and every record arrives once."""

from flintlock.common import WatermarkStrategy
from flintlock.common.config import Configuration
from flintlock.datastream import StreamExecutionEnvironment
from flintlock.datastream.connectors.file_system import FileSource, StreamFormat
from flintlock.datastream.connectors.hybrid_source import HybridSource
from flintlock.datastream.connectors.number_seq import NumberSequenceSource
from flintlock.datastream.functions import MapFunction, RuntimeContext
from flintlock.testing.executor import use_thread_executor


class Tag(MapFunction):
    """(subtask index, record): which source subtask read it."""

    def open(self, runtime_context: RuntimeContext):
        self.subtask = runtime_context.get_index_of_this_subtask()

    def map(self, value):
        return self.subtask, value


def test_files_then_numbers_each_subtask_in_order(monkeypatch, tmp_path):
    use_thread_executor(monkeypatch)
    files = tmp_path / "backfill"
    files.mkdir()
    for part in range(4):
        (files / f"part-{part}.txt").write_text(
            "".join(f"line-{part}-{i}\n" for i in range(25)), encoding="utf-8")
    source = HybridSource.builder(
        FileSource.for_record_stream_format(StreamFormat.text_line_format(), str(files)).build()
    ).add_source(NumberSequenceSource(1, 300)).build()
    env = StreamExecutionEnvironment.get_execution_environment(
        Configuration({"execution.checkpointing.dir": str(tmp_path / "checkpoints")}))
    env.set_parallelism(2)
    stream = env.from_source(source, WatermarkStrategy.no_watermarks(), "hybrid").map(Tag())
    with stream.execute_and_collect("hybrid source") as results:
        tagged = list(results)
    lines = sorted(value for _, value in tagged if isinstance(value, str))
    numbers = sorted(value for _, value in tagged if isinstance(value, int))
    assert lines == sorted(f"line-{p}-{i}\n".strip() for p in range(4) for i in range(25))
    assert numbers == list(range(1, 301))
    for subtask in (0, 1):
        kinds = [isinstance(value, int) for index, value in tagged if index == subtask]
        assert kinds == sorted(kinds), f"subtask {subtask} read a number before a file line"
