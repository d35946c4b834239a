"""Writing with ``FileSink`` (row format, ``Encoder.simple_string_encoder``) from a parallel
``NumberSequenceSource``, then reading back the finished part files.

Two jobs write to fresh directories: one in BATCH execution mode, one in STREAMING mode with
exactly-once checkpoints; in both, a bounded job's files are finished when it ends. Part files
are named with the configured prefix and suffix; the program prints the sorted lines of the
visible (finished) files and whether every visible file name has that prefix and suffix. File
names otherwise carry a random id and a counter, so they are not printed.
"""

import os
import tempfile

from pyflink.common import Encoder, Types, WatermarkStrategy
from pyflink.datastream import CheckpointingMode, RuntimeExecutionMode, StreamExecutionEnvironment
from pyflink.datastream.connectors.file_system import FileSink, OutputFileConfig, RollingPolicy
from pyflink.datastream.connectors.number_seq import NumberSequenceSource


def finished_files(base_path):
    for directory, _, names in os.walk(base_path):
        for name in names:
            if not name.startswith("."):
                yield os.path.join(directory, name)


def report(title, base_path):
    print(title)
    files = sorted(finished_files(base_path))
    named = all(os.path.basename(path).startswith("squares-")
                and path.endswith(".txt") for path in files)
    print(f"part files named squares-*.txt: {named and bool(files)}")
    lines = []
    for path in files:
        with open(path, encoding="utf-8") as part:
            lines.extend(part.read().splitlines())
    for line in sorted(lines, key=lambda text: int(text.split()[0])):
        print(line)


def write_squares(env, base_path):
    numbers = env.from_source(NumberSequenceSource(1, 12), WatermarkStrategy.no_watermarks(),
                              "numbers")
    sink = FileSink.for_row_format(base_path, Encoder.simple_string_encoder()) \
        .with_output_file_config(OutputFileConfig.builder()
                                 .with_part_prefix("squares")
                                 .with_part_suffix(".txt")
                                 .build()) \
        .with_rolling_policy(RollingPolicy.default_rolling_policy()) \
        .build()
    numbers.map(lambda n: f"{n} squared is {n * n}", output_type=Types.STRING()).sink_to(sink)


def file_sink():
    batch_path = tempfile.mkdtemp(prefix="parity-batch-")
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_runtime_mode(RuntimeExecutionMode.BATCH)
    env.set_parallelism(2)
    write_squares(env, batch_path)
    env.execute("file_sink batch")
    report("== BATCH", batch_path)

    streaming_path = tempfile.mkdtemp(prefix="parity-streaming-")
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(2)
    env.enable_checkpointing(100, CheckpointingMode.EXACTLY_ONCE)
    write_squares(env, streaming_path)
    env.execute("file_sink streaming")
    report("== STREAMING with checkpoints", streaming_path)


if __name__ == "__main__":
    file_sink()
