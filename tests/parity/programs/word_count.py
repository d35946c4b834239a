"""Streaming word count over a text file, read with a bounded ``FileSource``.

Lines → words (lower-cased, punctuation stripped) → ``(word, 1)`` → keyed ``reduce``: a running
count per word, printed after every word. Parallelism 1, so the printed order is the order of
the words in the file.

Usage: ``python word_count.py [--input FILE]`` (default: ``data/words.txt`` next to it).
"""

import argparse
import os
import sys

from pyflink.common import WatermarkStrategy
from pyflink.datastream import StreamExecutionEnvironment
from pyflink.datastream.connectors.file_system import FileSource, StreamFormat

DEFAULT_INPUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "words.txt")


def split(line):
    for word in line.lower().split():
        word = word.strip(".,;:!?'\"")
        if word:
            yield word


def word_count(input_path):
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(1)

    source = FileSource.for_record_stream_format(StreamFormat.text_line_format(), input_path) \
        .process_static_file_set() \
        .build()
    lines = env.from_source(source, WatermarkStrategy.no_watermarks(), "file_source")

    lines.flat_map(split) \
        .map(lambda word: (word, 1)) \
        .key_by(lambda pair: pair[0]) \
        .reduce(lambda a, b: (a[0], a[1] + b[1])) \
        .print()

    env.execute("word_count")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--input", dest="input", default=DEFAULT_INPUT, help="text file to count")
    known_args, _ = parser.parse_known_args(sys.argv[1:])
    word_count(known_args.input)
