"""Word count in the shape of PyFlink's own ``word_count`` example: BATCH execution mode, a
``FileSource`` over a text file, ``(word, count)`` declared as ``Types.TUPLE``, the result both
printed and written with a ``FileSink`` (``Encoder.simple_string_encoder``, part prefix and
suffix) and read back.

Declared tuples print and encode as Java shows them (``(word,3)``). Keys come out of a batch
reduction in no defined order, so the program prints the file's lines sorted, and the harness
compares the whole output as sorted lines.
"""

import os
import tempfile

from pyflink.common import Encoder, Types, WatermarkStrategy
from pyflink.datastream import RuntimeExecutionMode, StreamExecutionEnvironment
from pyflink.datastream.connectors.file_system import (
    FileSink,
    FileSource,
    OutputFileConfig,
    RollingPolicy,
    StreamFormat,
)

INPUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "words.txt")


def split(line):
    yield from (word.strip(".,;:!?").lower() for word in line.split())


def written_lines(base_path):
    lines = []
    for directory, _, names in os.walk(base_path):
        for name in names:
            if name.startswith("prefix") and name.endswith(".ext"):
                with open(os.path.join(directory, name), encoding="utf-8") as part:
                    lines.extend(part.read().splitlines())
    return sorted(lines)


def batch_word_count_files():
    output_path = tempfile.mkdtemp(prefix="parity-word-count-")
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_runtime_mode(RuntimeExecutionMode.BATCH)
    env.set_parallelism(1)

    lines = env.from_source(
        FileSource.for_record_stream_format(StreamFormat.text_line_format(), INPUT)
                  .process_static_file_set().build(),
        WatermarkStrategy.for_monotonous_timestamps(), "file_source")
    counts = lines.flat_map(split) \
        .map(lambda word: (word, 1), output_type=Types.TUPLE([Types.STRING(), Types.INT()])) \
        .key_by(lambda pair: pair[0]) \
        .reduce(lambda a, b: (a[0], a[1] + b[1]))

    counts.print()
    counts.sink_to(FileSink.for_row_format(output_path, Encoder.simple_string_encoder())
                   .with_output_file_config(OutputFileConfig.builder()
                                            .with_part_prefix("prefix")
                                            .with_part_suffix(".ext")
                                            .build())
                   .with_rolling_policy(RollingPolicy.default_rolling_policy())
                   .build())
    env.execute("batch_word_count_files")

    for line in written_lines(output_path):
        print(f"file: {line}")


if __name__ == "__main__":
    batch_word_count_files()
