"""The demo job of ``make run``: a streaming word count with checkpoints on embedded Spark.

Lines of text flow from a source through ``flat_map`` (split into words) and ``map`` (pair
with 1) to a keyed ``reduce`` (running count per word) at parallelism 2, checkpointed every
500 ms (exactly once). The running counts come back to the driver through
``execute_and_collect``; the demo prints some of them as they arrive and then the final top
words, and checks them against a plain Python count.

Written exactly as a PyFlink program would be, with ``flintlock`` in the imports.
"""

from __future__ import annotations

import collections
import sys
import tempfile
import time

from flintlock.common import Configuration
from flintlock.datastream import CheckpointingMode, StreamExecutionEnvironment

TEXT = """\
To be, or not to be, that is the question:
Whether 'tis nobler in the mind to suffer
The slings and arrows of outrageous fortune,
Or to take arms against a sea of troubles
And by opposing end them. To die: to sleep;
No more; and by a sleep to say we end
The heart-ache and the thousand natural shocks
That flesh is heir to, 'tis a consummation
Devoutly to be wish'd. To die, to sleep;
To sleep: perchance to dream: ay, there's the rub;
For in that sleep of death what dreams may come
When we have shuffled off this mortal coil,
Must give us pause."""

REPEAT = 400


def split_words(line: str) -> list[str]:
    cleaned = "".join(ch.lower() if ch.isalpha() or ch == "'" else " " for ch in line)
    return [word.strip("'") for word in cleaned.split() if word.strip("'")]


def main() -> int:
    lines = TEXT.splitlines() * REPEAT
    config = Configuration()
    config.set_string("execution.checkpointing.dir", tempfile.mkdtemp(prefix="flintlock-demo-"))
    env = StreamExecutionEnvironment.get_execution_environment(config)
    env.set_parallelism(2)
    env.enable_checkpointing(500, CheckpointingMode.EXACTLY_ONCE)

    counts = (
        env.from_collection(lines)
        .flat_map(split_words)
        .map(lambda word: (word, 1))
        .key_by(lambda pair: pair[0])
        .reduce(lambda a, b: (a[0], a[1] + b[1]))
    )

    print(f"flintlock demo: streaming word count over {len(lines)} lines, parallelism 2, "
          "exactly-once checkpoints every 500 ms, on embedded Spark")
    started = time.monotonic()
    final: dict[str, int] = {}
    updates = 0
    for word, count in counts.execute_and_collect("word count"):
        updates += 1
        final[word] = max(count, final.get(word, 0))
        if updates % 5000 == 0:
            print(f"  ... {updates} updates so far, e.g. {word!r}: {count}")
    elapsed = time.monotonic() - started

    expected = collections.Counter(w for line in lines for w in split_words(line))
    print(f"done in {elapsed:.1f} s: {updates} running-count updates for {len(final)} words")
    print("top words:")
    for word, count in sorted(final.items(), key=lambda item: (-item[1], item[0]))[:10]:
        print(f"  {word:<12} {count}")
    if final != dict(expected) or updates != sum(expected.values()):
        print("MISMATCH against a plain Python count", file=sys.stderr)
        return 1
    print("the counts match a plain Python count exactly")
    return 0


if __name__ == "__main__":
    sys.exit(main())
