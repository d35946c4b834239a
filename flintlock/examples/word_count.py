"""The demo job of ``make run``: a streaming word count with checkpoints on embedded Spark.

The Spark runtime (issue 4) has not landed yet, so this reports that honestly instead of
pretending to run a job.
"""

from __future__ import annotations

import sys


def main() -> int:
    print(
        "flintlock: the Spark runtime is not implemented yet, so the word-count demo cannot "
        "run. `make test` runs what exists so far."
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
