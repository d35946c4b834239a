"""The bare-loop reference: each job's work as a plain Python loop on one core.

The loops call the same user functions as the jobs (``functions``), once per record each, and
keep state in a dict, as DESIGN.md §4 defines the reference: no framework, no batching, no
second core. The event-time loops keep a watermark (largest timestamp minus the allowed
out-of-orderness) and fire a window once the watermark passes its end, as the job does; the
timer loop fires its timers at the end of input, where the job's maximum watermark fires them
(all events of a run fall in one day).
"""

from __future__ import annotations

import os
from typing import Any

from benchmarks.ported import functions as f


def keyed_count(n: int) -> list[Any]:
    keep = f.final_counts_only(n)
    state: dict[Any, Any] = {}
    out = []
    for i in range(n):
        t = f.to_pair(i)
        k = f.first_field(t)
        acc = state.get(k)
        acc = t if acc is None else f.add_counts(acc, t)
        state[k] = acc
        if keep(acc):
            out.append(acc)
    return out


def word_count(text_dir: str, out_dir: str) -> None:
    state: dict[Any, Any] = {}
    names = sorted(name for name in os.listdir(text_dir) if not name.startswith((".", "_")))
    with open(os.path.join(out_dir, "part-0"), "w", encoding="utf-8") as out:
        for name in names:
            with open(os.path.join(text_dir, name), encoding="utf-8") as lines:
                for line in lines:
                    for word in f.split(line.rstrip("\n")):
                        t = f.to_word_pair(word)
                        k = f.first_field(t)
                        acc = state.get(k)
                        acc = t if acc is None else f.add_counts(acc, t)
                        state[k] = acc
                        out.write(f.format_count(acc) + "\n")


def window_count(n: int) -> list[Any]:
    assigner, aggregate = f.EventTimestamp(), f.CountEvents()
    panes: dict[int, dict[Any, Any]] = {}  # window start -> key -> accumulator
    out: list[Any] = []
    max_ts, next_end = -(1 << 62), 1 << 62  # next_end: the earliest pending window's end
    for i in range(n):
        t = f.to_event(i)
        ts = assigner.extract_timestamp(t, 0)
        k = f.first_field(t)
        start = ts - ts % f.WINDOW_MS
        pane = panes.get(start)
        if pane is None:
            pane = panes[start] = {}
            next_end = min(next_end, start + f.WINDOW_MS)
        acc = pane.get(k)
        pane[k] = aggregate.add(t, aggregate.create_accumulator() if acc is None else acc)
        if ts > max_ts:
            max_ts = ts
            if max_ts - f.OUT_OF_ORDERNESS_MS - 1 >= next_end - 1:
                next_end = _fire(panes, max_ts - f.OUT_OF_ORDERNESS_MS - 1, aggregate, out)
    _fire(panes, 1 << 62, aggregate, out)
    return out


def _fire(panes: dict[int, dict[Any, Any]], watermark: int, aggregate: Any, out: list[Any]
          ) -> int:
    """Emits every window whose end the watermark has passed; returns the next window end."""
    for start in sorted(panes):
        if start + f.WINDOW_MS - 1 > watermark:
            return start + f.WINDOW_MS
        for k, acc in panes.pop(start).items():
            out.append((k, start, aggregate.get_result(acc)))
    return 1 << 62


def timer_count(n: int) -> list[Any]:
    assigner = f.EventTimestamp()
    counts: dict[Any, int] = {}
    timers: dict[Any, int] = {}
    for i in range(n):
        t = f.to_event(i)
        ts = assigner.extract_timestamp(t, 0)
        k = f.first_field(t)
        current = counts.get(k)
        if current is None:
            current = 0
            timers[k] = f.end_of_day(ts)
        counts[k] = current + 1
    return [(k, ts + 1 - f.DAY_MS, counts.pop(k))
            for k, ts in sorted(timers.items(), key=lambda item: item[1])]
