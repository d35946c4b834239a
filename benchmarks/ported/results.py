"""Inputs and results of the ported jobs: the generated text, each job's canonical result, and
the checks that make a broken job fail the benchmark instead of being measured.

A run's result is reduced to a canonical form (sorted tuples; for the word count, the number
of output lines and each word's final count), checked against what the job must give for
``n`` records (``check_expected``), and compared with the bare loop's result for the same
``n`` by ``digest``. Any difference raises ``ResultMismatchError``.
"""

from __future__ import annotations

import hashlib
import itertools
import os
import random
import string
from typing import Any

from benchmarks.ported import functions as f

JOBS = ("keyed_count", "word_count", "window_count", "timer_count")
TEXT_FILES = 2
VOCABULARY = 5_000


class ResultMismatchError(Exception):
    """A job's result differs from what the same work gives in the bare loop."""

    def __init__(self, job: str, engine: str, n: int, detail: str) -> None:
        super().__init__(job, engine, n, detail)
        self.job, self.engine, self.n, self.detail = job, engine, n, detail

    def __str__(self) -> str:
        return f"{self.job} on {self.engine} with {self.n:,} records: {self.detail}"


def check_records(n: int) -> None:
    """Every job's expected result needs whole lines of words and equal counts per key."""
    if n <= 0 or n % f.KEYS or n % f.WORDS_PER_LINE or n > f.MAX_EVENTS:
        raise ValueError(f"record counts must be positive multiples of {f.KEYS} and "
                         f"{f.WORDS_PER_LINE} up to {f.MAX_EVENTS:,}, got {n:,}")


def generate_text(directory: str, words: int, seed: int = 20) -> None:
    """``words`` words, ``WORDS_PER_LINE`` per line, in ``TEXT_FILES`` files of equal size;
    word frequencies follow Zipf's law over a vocabulary of random lowercase words."""
    rng = random.Random(seed)
    vocabulary = sorted({"".join(rng.choices(string.ascii_lowercase, k=rng.randint(2, 10)))
                         for _ in range(VOCABULARY)})
    rng.shuffle(vocabulary)
    weights = list(itertools.accumulate(1 / rank for rank in range(1, len(vocabulary) + 1)))
    os.makedirs(directory, exist_ok=True)
    lines = words // f.WORDS_PER_LINE
    for part in range(TEXT_FILES):
        count = lines * (part + 1) // TEXT_FILES - lines * part // TEXT_FILES
        with open(os.path.join(directory, f"text-{part}.txt"), "w", encoding="utf-8") as out:
            for start in range(0, count, 10_000):
                chosen = rng.choices(vocabulary, cum_weights=weights,
                                     k=min(10_000, count - start) * f.WORDS_PER_LINE)
                out.writelines(" ".join(chosen[i:i + f.WORDS_PER_LINE]) + "\n"
                               for i in range(0, len(chosen), f.WORDS_PER_LINE))


def read_lines(directory: str) -> list[str]:
    """Every line of every visible file under ``directory`` (a ``FileSink`` keeps unfinished
    files hidden, with names starting with ``.`` or ``_``)."""
    lines: list[str] = []
    for root, _, names in os.walk(directory):
        for name in sorted(names):
            if not name.startswith((".", "_")):
                with open(os.path.join(root, name), encoding="utf-8") as handle:
                    lines.extend(handle.read().splitlines())
    return lines


def canonical(job: str, items: list[Any]) -> Any:
    """The order-free form of a result (for the word count, ``items`` are the output lines)."""
    if job != "word_count":
        return sorted(tuple(item) for item in items)
    finals: dict[str, int] = {}
    for line in items:
        word, count = line.split("\t")
        finals[word] = max(finals.get(word, 0), int(count))
    return len(items), sorted(finals.items())


def digest(result: Any) -> str:
    return hashlib.sha256(repr(result).encode()).hexdigest()[:16]


def _expected_problem(job: str, n: int, result: Any) -> str | None:
    per_key = n // f.KEYS
    if job == "keyed_count":
        counts = [(k, per_key) for k in range(f.KEYS)]
        return None if result == counts else f"expected {f.KEYS} keys of {per_key}"
    if job == "word_count":
        lines, finals = result
        total = sum(count for _, count in finals)
        return None if lines == total == n else f"{lines} lines and {total} words, not {n}"
    if job == "window_count":
        total = sum(count for _, _, count in result)
        return None if total == n else f"windows hold {total} records, not {n}"
    day = f.BASE_MS - f.BASE_MS % f.DAY_MS
    daily = [(k, day, per_key) for k in range(f.KEYS)]
    return None if result == daily else f"expected {f.KEYS} keys of {per_key} on day {day}"


def check_expected(job: str, engine: str, n: int, result: Any) -> None:
    problem = _expected_problem(job, n, result)
    if problem is not None:
        raise ResultMismatchError(job, engine, n, problem)


def check_same(job: str, engine: str, n: int, result_digest: str, bare_digest: str) -> None:
    if result_digest != bare_digest:
        raise ResultMismatchError(job, engine, n, f"result digest {result_digest} differs "
                                  f"from the bare loop's {bare_digest}")
