"""The plot of a Nexmark run's throughput (issue 33): marginal events/s per query and engine.

    .venv/bin/python -m benchmarks.nexmark.plot docs/benchmarks-nexmark.json \
        docs/benchmarks-nexmark.png

Reads the JSON ``run.py --json`` writes (``throughput``: per query and engine the marginal
``rate``, or null where the engine did not run the query or its large size was not slower
than its small one; ``rate_at_most`` where its large size timed out) and draws one group of
bars per query, one bar per engine, on a log scale (a timed-out run hatched up to its bound),
with flintlock's ratio to PyFlink over each group and the geometric mean of those ratios in the
title. A missing rate is a gap with its reason under the axis ("—"). The
figure's footer names the commit, the sizes, the rounds and the load average of the run.
matplotlib comes with the ``bench`` extra.
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path
from typing import Any

ENGINE_COLOURS = {"flintlock": "#d62728", "pyflink": "#1f77b4", "spark": "#ff7f0e"}


def ratios(throughput: dict[str, dict[str, Any]], engine: str = "flintlock",
           other: str = "pyflink") -> dict[str, float]:
    """``engine``'s marginal rate over ``other``'s, per query where both have one."""
    out = {}
    for query, by_engine in throughput.items():
        mine = (by_engine.get(engine) or {}).get("rate")
        theirs = (by_engine.get(other) or {}).get("rate")
        if mine and theirs:
            out[query] = mine / theirs
    return out


def geomean(values: list[float]) -> float | None:
    return math.exp(sum(map(math.log, values)) / len(values)) if values else None


def footer(report: dict[str, Any]) -> str:
    load = report.get("load_average") or {}
    parts = [f"commit {report.get('commit', '?')[:10]}",
             f"sizes {' / '.join(f'{n:,}' for n in report.get('sizes', []))} events",
             f"{report.get('rounds', '?')} interleaved rounds, medians",
             f"time limit {report.get('time_limit_s') or 'none'} s a run",
             f"load average {load.get('start', '?')} -> {load.get('end', '?')}"]
    return "; ".join(parts)


def _timed_out_bars(axes: Any, xs: list[float], bounds: list[float], width: float,
                    colour: str) -> None:
    """A timed-out run's bar: hatched and unfilled up to the upper bound of its rate, marked
    "t/o" (the rate is below the bar's top)."""
    axes.bar(xs, bounds, width, fill=False, hatch="///", edgecolor=colour)
    for x, bound in zip(xs, bounds, strict=True):
        axes.annotate("t/o", (x, bound), ha="center", va="bottom", fontsize=6, color=colour)


def plot(report: dict[str, Any], out: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    throughput = report["throughput"]
    queries = list(throughput)
    engines = [e for e in ENGINE_COLOURS if any(e in throughput[q] for q in queries)]
    width = 0.8 / max(1, len(engines))
    figure, axes = plt.subplots(figsize=(max(8.0, 0.75 * len(queries) + 2), 5.0))
    for number, engine in enumerate(engines):
        xs, ys, bound_xs, bounds = [], [], [], []
        for index, query in enumerate(queries):
            entry = throughput[query].get(engine) or {}
            x = index + (number - (len(engines) - 1) / 2) * width
            if entry.get("rate"):
                xs.append(x)
                ys.append(entry["rate"])
            elif entry.get("rate_at_most"):
                bound_xs.append(x)
                bounds.append(entry["rate_at_most"])
        axes.bar(xs, ys, width, label=engine, color=ENGINE_COLOURS[engine])
        _timed_out_bars(axes, bound_xs, bounds, width, ENGINE_COLOURS[engine])
    by_query = ratios(throughput)
    for index, query in enumerate(queries):
        if query in by_query:
            axes.annotate(f"{by_query[query]:.2f}x", (index, 1.0),
                          xycoords=("data", "axes fraction"), ha="center", va="bottom",
                          fontsize=7)
    axes.set_yscale("log")
    axes.set_xticks(range(len(queries)), queries)
    axes.set_ylabel("marginal events/s (log)")
    mean = geomean(list(by_query.values()))
    title = "Nexmark, parallelism 2: marginal throughput (over the bars: flintlock / PyFlink)"
    if mean is not None:
        title += f"\ngeometric mean flintlock / PyFlink {mean:.2f}x over {len(by_query)} queries"
    axes.set_title(title, fontsize=10, pad=14)
    from matplotlib.patches import Patch

    axes.legend(handles=[Patch(color=ENGINE_COLOURS[e], label=e) for e in engines], fontsize=8)
    figure.text(0.01, 0.01, footer(report) + "\na missing bar: no rate (see the JSON); "
                "hatched, t/o: the large size timed out, the rate is below the bar's top",
                fontsize=7)
    figure.tight_layout(rect=(0, 0.05, 1, 1))
    figure.savefig(out, dpi=110)
    plt.close(figure)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("json", type=Path)
    parser.add_argument("png", type=Path)
    args = parser.parse_args(argv)
    plot(json.loads(args.json.read_text()), args.png)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
