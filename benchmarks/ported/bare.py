"""The bare-loop reference: each job's work as a plain Python loop on one core.

The loops call the same user functions as the jobs (``functions``, as ``f``), once per record
each, and keep state in a dict, as DESIGN.md §4 defines the reference: no framework, no
batching, no second core. The event-time loops keep a watermark (largest timestamp minus the
allowed out-of-orderness) and fire a window once the watermark passes its end, as the job
does; the timer loop fires its timers at the end of input, where the job's maximum watermark
fires them (all events of a run fall in one day).

Each loop is one piece of source run in one of two scopes, the only difference between them:

* ``module``: as the top level of a script, every variable a global (dict) lookup. This is
  the loop issue #20 measured at 2.23 M records/s for the keyed count and the reference of
  its targets and of DESIGN.md §4;
* ``function``: the same lines as the body of a function, so ``t``, ``k``, ``acc`` and
  ``state`` are fast locals; about 1.6 times as fast, the stricter reference.

Inputs are the names ``n``, ``text_dir`` and ``out_dir``; the result is ``out``.
"""

from __future__ import annotations

import os
import textwrap
import time
from typing import Any

from benchmarks.ported import functions

LOOPS = {
    "keyed_count": """
keep = f.final_counts_only(n)
state = {}
out = []
for i in range(n):
    t = f.to_pair(i)
    k = f.first_field(t)
    acc = state.get(k)
    acc = t if acc is None else f.add_counts(acc, t)
    state[k] = acc
    if keep(acc):
        out.append(acc)
""",
    "word_count": """
state = {}
names = sorted(name for name in os.listdir(text_dir) if not name.startswith((".", "_")))
with open(os.path.join(out_dir, "part-0"), "w", encoding="utf-8") as sink:
    for name in names:
        with open(os.path.join(text_dir, name), encoding="utf-8") as lines:
            for line in lines:
                for word in f.split(line.rstrip("\\n")):
                    t = f.to_word_pair(word)
                    k = f.first_field(t)
                    acc = state.get(k)
                    acc = t if acc is None else f.add_counts(acc, t)
                    state[k] = acc
                    sink.write(f.format_count(acc) + "\\n")
out = []
""",
    "window_count": """
def fire(panes, watermark, aggregate, out):
    # Emits every window whose end the watermark has passed; returns the next window end.
    for start in sorted(panes):
        if start + f.WINDOW_MS - 1 > watermark:
            return start + f.WINDOW_MS
        for k, acc in panes.pop(start).items():
            out.append((k, start, aggregate.get_result(acc)))
    return 1 << 62

assigner, aggregate = f.EventTimestamp(), f.CountEvents()
panes = {}  # window start -> key -> accumulator
out = []
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
            next_end = fire(panes, max_ts - f.OUT_OF_ORDERNESS_MS - 1, aggregate, out)
fire(panes, 1 << 62, aggregate, out)
""",
    "timer_count": """
assigner = f.EventTimestamp()
counts = {}
timers = {}
for i in range(n):
    t = f.to_event(i)
    ts = assigner.extract_timestamp(t, 0)
    k = f.first_field(t)
    current = counts.get(k)
    if current is None:
        current = 0
        timers[k] = f.end_of_day(ts)
    counts[k] = current + 1
out = [(k, ts + 1 - f.DAY_MS, counts.pop(k))
       for k, ts in sorted(timers.items(), key=lambda item: item[1])]
""",
}
SCOPES = ("module", "function")


def _source(job: str, scope: str) -> str:
    if scope == "module":
        return LOOPS[job]
    return f"def loop():\n{textwrap.indent(LOOPS[job], '    ')}    return out\nout = loop()\n"


def run(job: str, scope: str, n: int, text_dir: str, out_dir: str) -> tuple[float, list[Any]]:
    """Runs ``job``'s loop in ``scope``: (wall seconds, ``out``)."""
    code = compile(_source(job, scope), f"<bare {job}, {scope} scope>", "exec")
    namespace: dict[str, Any] = {"f": functions, "os": os, "n": n, "text_dir": text_dir,
                                 "out_dir": out_dir}
    started = time.perf_counter()
    exec(code, namespace)
    return time.perf_counter() - started, namespace["out"]
