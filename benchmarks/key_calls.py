"""The C loops that call a key selector, with the user's function as written and as the
runtime calls it (``plain_key_getter``): CPU ns per record (issue 31).

What: the keyed writer's routing of a batch to two channels (``route_by_key``), the keyed
reduce on the heap table (``reduce_into``, with the user's reduce) and the tumbling window
operator's grouping by start and key (``tumbling_panes``), each over 1,000-record batches of
``(i % 100, 1)`` with ``def first_field(t): return t[0]`` as the key selector — once as that
function, once as the ``operator.itemgetter(0)`` ``plain_key_getter`` makes of it.

How: CPU time (``time.process_time``) over ``--loops`` batches per measurement; rounds
interleave the two forms (before/after, then after/before); median (min) of the rounds.

    .venv/bin/python -m benchmarks.key_calls [--rounds 11] [--loops 300]
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from typing import Any

from flintlock.runtime.network.key_getters import plain_key_getter
from flintlock.runtime.network.key_routing import route_by_key
from flintlock.runtime.state.keygroups import key_group_index
from flintlock.runtime.tasks.keyed_reduce import reduce_direct
from flintlock.runtime.tasks.window_grouping import tumbling_panes

BATCH = [(i % 100, 1) for i in range(1_000)]
STAMPS = [1_700_000_000_000 + 7 * i for i in range(1_000)]


def first_field(t: Any) -> Any:
    return t[0]


def add_counts(a: Any, b: Any) -> Any:
    return (a[0], a[1] + b[1])


def routing(key_of: Callable[[Any], Any]) -> Callable[[], None]:
    cache: dict[Any, int] = {}

    def miss(key: Any) -> int:
        cache[key] = channel = key_group_index(key, 128) % 2
        return channel

    def step() -> None:
        route_by_key(BATCH, key_of, cache, miss, [[], []], None, None)
    return step


def reducing(key_of: Callable[[Any], Any]) -> Callable[[], None]:
    table: dict[Any, Any] = {}

    def step() -> None:
        reduce_direct(BATCH, key_of, add_counts, table)
    return step


def grouping(key_of: Callable[[Any], Any]) -> Callable[[], None]:
    def step() -> None:
        tumbling_panes(BATCH, STAMPS, key_of, 10_000, 0)
    return step


STAGES = {
    "keyed writer's routing (route_by_key, 2 channels)": routing,
    "keyed reduce on the heap table (reduce_into)": reducing,
    "tumbling window grouping (tumbling_panes)": grouping,
}


def timed(step: Callable[[], None], loops: int) -> float:
    started = time.process_time()
    for _ in range(loops):
        step()
    return (time.process_time() - started) / (loops * len(BATCH)) * 1e9


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=11)
    parser.add_argument("--loops", type=int, default=300)
    args = parser.parse_args(argv)
    forms = {"as written": first_field, "as called": plain_key_getter(first_field)}
    costs: dict[tuple[str, str], list[float]] = {}
    for round_ in range(args.rounds):
        order = list(forms) if round_ % 2 == 0 else list(reversed(forms))
        for form in order:
            for stage, make in STAGES.items():
                costs.setdefault((stage, form), []).append(timed(make(forms[form]), args.loops))
    print(f"CPU ns/record, median (min) of {args.rounds} interleaved rounds; key selector "
          f"as written: def first_field; as called: {forms['as called']!r}")
    print("| stage | as written | as called | called / written |\n|---|---:|---:|---:|")
    for stage in STAGES:
        written, called = costs[(stage, "as written")], costs[(stage, "as called")]
        ratio = statistics.median(called) / statistics.median(written)
        print(f"| {stage} | {statistics.median(written):.0f} ({min(written):.0f}) | "
              f"{statistics.median(called):.0f} ({min(called):.0f}) | {ratio:.2f} |")


if __name__ == "__main__":
    main()
