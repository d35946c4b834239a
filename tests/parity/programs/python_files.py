"""A job whose functions use a module from another file, shipped with ``env.add_python_file``
(PyFlink's way to make user modules importable on the workers) and imported inside the
functions.

Parallelism 2; results collected and printed sorted.
"""

import os

from pyflink.common import Types
from pyflink.datastream import StreamExecutionEnvironment

HELPERS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "parity_helpers.py")


def normalized(word):
    import parity_helpers
    return parity_helpers.normalize(word)


def scored(word):
    import parity_helpers
    return f"{word} scores {parity_helpers.score(word)}"


def python_files():
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(2)
    env.add_python_file(HELPERS)

    words = env.from_collection(["Stream,", "STATE", "timer!", "Window"], type_info=Types.STRING())
    results = words.map(normalized, output_type=Types.STRING()) \
        .map(scored, output_type=Types.STRING())

    with results.execute_and_collect("python_files") as collected:
        for line in sorted(collected):
            print(line)


if __name__ == "__main__":
    python_files()
