"""Figures of the ported-jobs suite: marginal rates, ratios, start-up, the table and the plot.

Input is the list of raw runs ``ported_jobs`` collects (one dict per child: round, job,
configuration, records, wall and first-record seconds). Per round, a configuration's
marginal rate is ``(5N - N) / (t(5N) - t(N))`` and its ratios are taken against the bare
loops' (module level, and in a function) and the best Bytewax configuration's marginal rates
of the same round; the table shows
the median over rounds of each. Start-up is the median time to the first record of the small
start-up runs. A marginal rate is ``None`` when t(5N) <= t(N) (N too small for the noise).
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class Row:
    job: str
    config: str
    engine: str
    rate: float | None  # records/s, median marginal rate over rounds
    vs_bare: float | None  # the bare loop at module level (issue #20's reference)
    vs_bare_function: float | None  # the same loop inside a function
    vs_bytewax: float | None
    vs_undeclared: float | None
    startup_s: float | None


def _median(values: Iterable[float | None]) -> float | None:
    present = [value for value in values if value is not None]
    return statistics.median(present) if present else None


def _wall(raw: list[dict[str, Any]], rnd: int, job: str, config: str, n: int) -> float | None:
    for run in raw:
        if (run["round"], run["job"], run["config"], run["records"]) == (rnd, job, config, n):
            return float(run["wall_s"])
    return None


def marginal(raw: list[dict[str, Any]], rnd: int, job: str, config: str, n: int
             ) -> float | None:
    small, large = _wall(raw, rnd, job, config, n), _wall(raw, rnd, job, config, 5 * n)
    if small is None or large is None or large <= small:
        return None
    return 4 * n / (large - small)


def _ratio(a: float | None, b: float | None) -> float | None:
    return None if a is None or not b else a / b


def summarize(raw: list[dict[str, Any]], configs: list[tuple[str, str]], jobs: list[str],
              records: dict[str, int], startup_records: int) -> list[Row]:
    """One row per (job, configuration); ``configs`` is ``[(name, engine), ...]``."""
    rounds = sorted({run["round"] for run in raw})
    bytewax = [name for name, engine in configs if engine == "bytewax"]
    rows = []
    for job in jobs:
        n = records[job]
        rates = {(name, r): marginal(raw, r, job, name, n) for name, _ in configs for r in rounds}
        best = {r: max((rates[name, r] or 0.0 for name in bytewax), default=0.0) for r in rounds}
        for name, engine in configs:
            undeclared = name.replace("declared", "undeclared") if " declared" in name else None
            rows.append(Row(
                job, name, engine, _median(rates[name, r] for r in rounds),
                _median(_ratio(rates[name, r], rates["bare", r]) for r in rounds),
                _median(_ratio(rates[name, r], rates["bare in a function", r]) for r in rounds),
                _median(_ratio(rates[name, r], best[r]) for r in rounds),
                None if undeclared is None else
                _median(_ratio(rates[name, r], rates.get((undeclared, r))) for r in rounds),
                _median(run["first_s"] for run in raw if run["job"] == job
                        and run["config"] == name and run["records"] == startup_records)))
    return rows


def baseline_summary(raw: list[dict[str, Any]]) -> dict[str, float | None]:
    runs = [run for run in raw if run["config"] == "spark-baseline"]
    return {key: _median(run[key] for run in runs) for key in ("session_s", "stage_s", "wall_s")}


def own_startup(raw: list[dict[str, Any]], job: str, config: str, startup_records: int
                ) -> float | None:
    """Median over rounds of the configuration's start-up minus the same round's Spark-only
    baseline (a bare session plus one two-task barrier stage)."""
    parts = []
    for base in (run for run in raw if run["config"] == "spark-baseline"):
        for run in raw:
            if (run["round"], run["job"], run["config"], run["records"]) == (
                    base["round"], job, config, startup_records) and run["first_s"] is not None:
                parts.append(run["first_s"] - base["wall_s"])
    return _median(parts)


def fmt(value: float | None, pattern: str) -> str:
    return "n/a" if value is None else format(value, pattern)


def table(rows: list[Row]) -> str:
    lines = ["| job | configuration | marginal M rec/s | x bare | x bare in a function | "
             "x best Bytewax | x undeclared | start-up s |",
             "|---|---|---:|---:|---:|---:|---:|---:|"]
    for row in rows:
        lines.append(
            f"| {row.job} | {row.config} | {fmt(row.rate and row.rate / 1e6, '.3f')} | "
            f"{fmt(row.vs_bare, '.2f')} | {fmt(row.vs_bare_function, '.2f')} | "
            f"{fmt(row.vs_bytewax, '.2f')} | "
            f"{fmt(row.vs_undeclared, '.2f')} | "
            f"{'—' if row.engine == 'bare' else fmt(row.startup_s, '.2f')} |")
    return "\n".join(lines)


def plot(rows: list[Row], baseline_s: float | None, path: str, title: str, smoke: bool
         ) -> None:
    """Marginal rates (left) and start-up (right) per job, one bar per configuration; a
    figure missing in the summary is drawn as an "n/a" label, not as a zero bar. A smoke run
    is stamped across the picture."""
    import textwrap

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    jobs = list(dict.fromkeys(row.job for row in rows))
    configs = list(dict.fromkeys(row.config for row in rows))
    by_key = {(row.job, row.config): row for row in rows}
    figure, (rates, startup) = plt.subplots(1, 2, figsize=(15, 6),
                                            gridspec_kw={"width_ratios": [3, 2]})
    width = 0.85 / len(configs)
    for index, config in enumerate(configs):
        colour = plt.get_cmap("tab10")(index % 10)
        xs = [j + (index - (len(configs) - 1) / 2) * width for j in range(len(jobs))]
        _bars(rates, xs, [by_key[job, config].rate for job in jobs], 1e-6, width, colour,
              config)
        if by_key[jobs[0], config].engine != "bare":
            _bars(startup, xs, [by_key[job, config].startup_s for job in jobs], 1.0, width,
                  colour, config)
    for axis in (rates, startup):
        axis.set_xticks(range(len(jobs)), jobs)
    rates.set_ylabel("marginal rate, M records/s")
    startup.set_ylabel("seconds from execute() to the first record")
    if baseline_s is not None:
        startup.axhline(baseline_s, color="black", linestyle="--",
                        label="Spark only: local[2] session + barrier stage")
    rates.legend(fontsize=7)
    startup.legend(fontsize=7)
    figure.suptitle("\n".join(textwrap.wrap(title, 130)), fontsize=9)
    if smoke:
        figure.text(0.5, 0.5, "SMOKE RUN - NOT FOR COMPARISON", fontsize=40, color="grey",
                    alpha=0.35, rotation=20, ha="center", va="center")
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)


def _bars(axis: Any, xs: list[float], values: list[float | None], scale: float, width: float,
          colour: Any, label: str) -> None:
    axis.bar(xs, [(value or 0.0) * scale for value in values], width, color=colour,
             label=label)
    for x, value in zip(xs, values, strict=True):
        if value is None:
            axis.text(x, 0, "n/a", rotation=90, ha="center", va="bottom", fontsize=6)
