"""Reading back the keyed sequence job of the fault schedules (threads and Spark): each
committed line is ``key seq count``; per key the values must arrive once and in order, each
count its position (exactly once), or each value at least once."""

from __future__ import annotations

import os
import re
from pathlib import Path

_PART = re.compile(r"^part-(\d+)-(\d+)\.txt$")


def lines_in_order(root: Path) -> list[tuple[int, int, int]]:
    """(key, seq, count) of every committed line, per subtask in part-file order."""
    parts = []
    for directory, _, names in os.walk(root):
        for name in names:
            match = _PART.match(name)
            if match:
                parts.append((int(match[1]), int(match[2]), Path(directory, name)))
    out = []
    for _, _, path in sorted(parts):
        out.extend(tuple(int(x) for x in line.split()) for line in path.read_text().split("\n")
                   if line)
    return out


def check_sequences(lines: list[tuple[int, int, int]], exactly_once: bool, n: int,
                    keys: int) -> None:
    """Per key: every value once and in order, each count its position (exactly once), or
    every value at least once."""
    by_key: dict[int, list[tuple[int, int]]] = {}
    for key, seq, count in lines:
        by_key.setdefault(key, []).append((seq, count))
    for key in range(keys):
        expected = list(range(len(range(key, n, keys))))
        seqs = [seq for seq, _ in by_key.get(key, [])]
        if exactly_once:
            assert seqs == expected, f"key {key}: not every value once and in order"
            assert all(count == seq + 1 for seq, count in by_key[key]), f"key {key}: state"
        else:
            assert set(seqs) == set(expected), f"key {key}: values missing"
