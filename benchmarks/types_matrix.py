"""Declared types against none, on every job shape (issue 31): the same job written twice,
with its ``output_type`` / ``key_type`` declarations and with every one deleted, on embedded
Spark at parallelism 2, each run a fresh interpreter.

Shapes (``K`` = 100 keys, ``N`` records into the job):

* ``tuples``: ``NumberSequenceSource`` → ``map`` to ``(i % K, 1)`` (``TUPLE([LONG, LONG])``) →
  ``key_by`` (``key_type=LONG``) → ``reduce`` (running count) → ``filter`` (final counts) →
  ``execute_and_collect`` (the ported ``keyed_count``);
* ``tuples_no_key_type``: the same, the ``map`` declares its type, the ``key_by`` none (the
  runtime never reads a ``key_type``: only ``KeyedStream.get_key_type`` returns it, so this
  shape runs exactly the job ``tuples`` runs, and any difference between the two is noise);
* ``rows``: the ``map`` gives ``Row(key, count)`` (``ROW_NAMED``), keyed by its field;
* ``strings``: the ``map`` gives ``"w<i % K>"`` (``STRING``), a second ``map`` ``(word, 1)``
  (``TUPLE([STRING, LONG])``), ``key_by`` (``key_type=STRING``), ``reduce``, ``filter``;
* ``checkpointed``: ``tuples`` with exactly-once checkpoints every 300 ms;
* ``files``: issue 31's new-user word count — ``FileSource`` text lines → ``flat_map``
  (``STRING``) → ``map`` (``TUPLE([STRING, LONG])``) → ``key_by`` **without** ``key_type`` →
  ``reduce`` → ``map`` to a line (``STRING``) → ``FileSink``, exactly-once checkpoints every
  300 ms.

Per round and shape: declared and undeclared interleaved on N records, then on 5N; the
marginal rate is ``4N / (t(5N) - t(N))`` with ``t`` the wall time of ``execute()`` /
``execute_and_collect()``, and again with ``t`` the CPU time of the job's Python processes
(the driver, Spark's daemon and workers: ``psutil``, read as the job ends; the steadier figure
on a loaded machine, whose start-up swings the wall time by seconds); the figure is the median
over rounds of the per-round ratio declared / undeclared. Every run's result is checked
(final counts per key; for ``files``, one output line per word and the final counts of the
text); a wrong result stops the run.

    .venv/bin/python -m benchmarks.types_matrix [--records N] [--repeat R] [--only SHAPE ...]
        [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from typing import Any

SHAPES = ("tuples", "tuples_no_key_type", "rows", "strings", "checkpointed", "files")
KEYS = 100
RESULT = "MATRIX-RESULT "
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


# -- the jobs (child side) --------------------------------------------------------------------


def _pair(i: int) -> tuple[int, int]:
    return (i % KEYS, 1)


def _word(i: int) -> str:
    return f"w{i % KEYS}"


def _word_pair(word: str) -> tuple[str, int]:
    return (word, 1)


def _first(t: Any) -> Any:
    return t[0]


def _add(a: Any, b: Any) -> Any:
    return (a[0], a[1] + b[1])


def _add_rows(a: Any, b: Any) -> Any:
    from flintlock.common import Row

    return Row(key=a[0], count=a[1] + b[1])


def _split(line: str) -> Any:
    yield from line.split()


def _line(t: tuple[str, int]) -> str:
    return f"{t[0]}\t{t[1]}"


def _build(env: Any, shape: str, n: int, typed: bool, text: str, out: str) -> Any:
    from flintlock.common import Encoder, Row, Types, WatermarkStrategy
    from flintlock.common.checkpointing import CheckpointingMode
    from flintlock.datastream.connectors.file_system import FileSink, FileSource, StreamFormat
    from flintlock.datastream.connectors.number_seq import NumberSequenceSource

    def t(**declared: Any) -> dict[str, Any]:
        return declared if typed else {}

    if shape in ("checkpointed", "files"):
        env.enable_checkpointing(300, CheckpointingMode.EXACTLY_ONCE)
    final = n // KEYS
    pair = Types.TUPLE([Types.LONG(), Types.LONG()])
    word_pair = Types.TUPLE([Types.STRING(), Types.LONG()])
    if shape == "files":
        source = FileSource.for_record_stream_format(StreamFormat.text_line_format(),
                                                     text).build()
        sink = FileSink.for_row_format(out, Encoder.simple_string_encoder()).build()
        (env.from_source(source, WatermarkStrategy.no_watermarks(), "text")
            .flat_map(_split, **t(output_type=Types.STRING()))
            .map(_word_pair, **t(output_type=word_pair))
            .key_by(_first)
            .reduce(_add)
            .map(_line, **t(output_type=Types.STRING()))
            .sink_to(sink))
        return None
    numbers = env.from_source(NumberSequenceSource(0, n - 1), WatermarkStrategy.no_watermarks(),
                              "numbers")
    if shape == "rows":
        row = Types.ROW_NAMED(["key", "count"], [Types.LONG(), Types.LONG()])
        stream = (numbers.map(lambda i: Row(key=i % KEYS, count=1), **t(output_type=row))
                  .key_by(lambda r: r.key, **t(key_type=Types.LONG()))
                  .reduce(_add_rows))
    elif shape == "strings":
        stream = (numbers.map(_word, **t(output_type=Types.STRING()))
                  .map(_word_pair, **t(output_type=word_pair))
                  .key_by(_first, **t(key_type=Types.STRING()))
                  .reduce(_add))
    else:
        key_type = {} if shape == "tuples_no_key_type" else t(key_type=Types.LONG())
        stream = (numbers.map(_pair, **t(output_type=pair))
                  .key_by(_first, **key_type)
                  .reduce(_add))
    return stream.filter(lambda r: r[1] == final)


def _check(shape: str, n: int, items: list[Any], text: str, out: str) -> str | None:
    """What is wrong with a run's result, or None."""
    if shape != "files":
        got = sorted((str(item[0]), item[1]) for item in items)
        keys = [f"w{k}" if shape == "strings" else str(k) for k in range(KEYS)]
        want = sorted((key, n // KEYS) for key in keys)
        return None if got == want else f"{len(got)} final counts, not {KEYS} of {n // KEYS}"
    from benchmarks.ported.results import read_lines

    lines = read_lines(out)
    finals: dict[str, int] = {}
    for line in lines:
        word, count = line.split("\t")
        finals[word] = max(finals.get(word, 0), int(count))
    words: Counter[str] = Counter()
    for name in sorted(os.listdir(text)):
        with open(os.path.join(text, name), encoding="utf-8") as handle:
            for line in handle:
                words.update(line.split())
    if len(lines) != n or finals != dict(words):
        return f"{len(lines)} lines and {len(finals)} words' counts, not {n} and the text's"
    return None


def child(shape: str, n: int, typed: bool, text: str, workdir: str) -> int:
    from flintlock.common.config import Configuration
    from flintlock.datastream import StreamExecutionEnvironment

    out = os.path.join(workdir, "out")
    config = Configuration().set_string("execution.checkpointing.dir",
                                        os.path.join(workdir, "chk"))
    env = StreamExecutionEnvironment.get_execution_environment(config)
    env.set_parallelism(2)
    stream = _build(env, shape, n, typed, text, out)
    items: list[Any] = []
    started = time.perf_counter()
    if stream is None:
        env.execute(shape)
    else:
        with stream.execute_and_collect(shape) as results:
            items.extend(results)
    wall = time.perf_counter() - started
    cpu = _python_cpu_s()
    problem = _check(shape, n, items, text, out)
    if problem is not None:
        print(f"WRONG RESULT: {shape} typed={typed} n={n}: {problem}", file=sys.stderr)
        return 1
    print(RESULT + json.dumps({"wall_s": wall, "cpu_s": cpu}), flush=True)
    return 0


def _python_cpu_s() -> float:
    """CPU seconds (user + system) so far of this process and every Python process below it
    (Spark's daemon and its workers, the TaskManagers; not the JVM): the job's work, start-up
    included, whatever else loads the machine."""
    import psutil

    me = psutil.Process()
    total = sum(me.cpu_times()[:2])
    for process in me.children(recursive=True):
        try:
            if "python" in process.name():
                total += sum(process.cpu_times()[:2])
        except psutil.Error:  # ended meanwhile
            continue
    return total


# -- the rounds (parent side) -----------------------------------------------------------------


def _run(shape: str, n: int, typed: bool, text: str, root: str) -> dict[str, float]:
    workdir = tempfile.mkdtemp(dir=root)
    env = dict(os.environ)
    env.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    env.setdefault("PYSPARK_PYTHON", sys.executable)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [ROOT, env.get("PYTHONPATH")]))
    argv = [sys.executable, "-m", "benchmarks.types_matrix", "--child", shape, "--records",
            str(n), "--text", text, "--workdir", workdir, *([] if typed else ["--undeclared"])]
    done = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=1_800)
    subprocess.run(["rm", "-rf", workdir], check=False)
    lines = [line for line in done.stdout.splitlines() if line.startswith(RESULT)]
    if done.returncode or not lines:
        raise SystemExit(f"{shape} typed={typed} n={n} failed:\n{done.stderr[-3000:]}")
    found = json.loads(lines[-1][len(RESULT):])
    return {"wall_s": float(found["wall_s"]), "cpu_s": float(found["cpu_s"])}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=int, default=2_000_000)
    parser.add_argument("--file-records", type=int, default=1_000_000,
                        help="N of the files shape (words)")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--only", nargs="+", choices=SHAPES, default=list(SHAPES))
    parser.add_argument("--json", default="")
    parser.add_argument("--child", choices=SHAPES)
    parser.add_argument("--undeclared", action="store_true")
    parser.add_argument("--text", default="")
    parser.add_argument("--workdir", default="")
    args = parser.parse_args(argv)
    if args.child:
        return child(args.child, args.records, not args.undeclared, args.text, args.workdir)
    from benchmarks.ported.results import generate_text

    runs: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="types-matrix-") as root:
        texts: dict[int, str] = {}
        for rnd in range(args.repeat):
            for shape in args.only:
                n = args.file_records if shape == "files" else args.records
                for size in (n, 5 * n):
                    text = ""
                    if shape == "files":
                        if size not in texts:
                            texts[size] = os.path.join(root, f"text-{size}")
                            generate_text(texts[size], size)
                        text = texts[size]
                    for typed in (True, False) if rnd % 2 == 0 else (False, True):
                        timed = _run(shape, size, typed, text, root)
                        runs.append({"round": rnd, "shape": shape, "records": size,
                                     "typed": typed, **timed})
                        print(f"  [round {rnd + 1}] {shape} n={size:,} "
                              f"{'declared' if typed else 'undeclared'}: "
                              f"{timed['wall_s']:.2f} s, Python CPU {timed['cpu_s']:.2f} s",
                              flush=True)
    print(table(runs, args))
    if args.json:
        with open(args.json, "w") as out:
            json.dump({"date_utc": time.strftime("%Y-%m-%d %H:%M", time.gmtime()),
                       "command": " ".join(["python -m benchmarks.types_matrix",
                                            *sys.argv[1:]]),
                       "load_average": os.getloadavg(), "runs": runs}, out, indent=1)
    return 0


def _rate(runs: list[dict[str, Any]], rnd: int, shape: str, typed: bool,
          measure: str = "wall_s") -> float | None:
    walls = {r["records"]: r[measure] for r in runs
             if (r["round"], r["shape"], r["typed"]) == (rnd, shape, typed)}
    if len(walls) != 2:
        return None
    small, large = sorted(walls)
    if walls[large] <= walls[small]:
        return None
    return (large - small) / (walls[large] - walls[small])


def table(runs: list[dict[str, Any]], args: argparse.Namespace) -> str:
    lines = ["| shape | measure | declared M rec/s | undeclared M rec/s | declared / undeclared "
             "(median of rounds) | per round |", "|---|---|---:|---:|---:|---|"]
    rounds = sorted({r["round"] for r in runs})
    for shape, measure in [(s, m) for s in args.only for m in ("wall_s", "cpu_s")]:
        declared = [_rate(runs, rnd, shape, True, measure) for rnd in rounds]
        undeclared = [_rate(runs, rnd, shape, False, measure) for rnd in rounds]
        ratios = [d / u for d, u in zip(declared, undeclared, strict=True) if d and u]

        def median(values: list[float | None]) -> str:
            present = [v for v in values if v]
            return f"{statistics.median(present):.3f}" if present else "n/a"

        label = "wall" if measure == "wall_s" else "per Python CPU-s"
        lines.append(f"| {shape} | {label} | {median([d and d / 1e6 for d in declared])} | "
                     f"{median([u and u / 1e6 for u in undeclared])} | "
                     f"**{median(list(ratios))}** | "
                     f"{', '.join(f'{r:.2f}' for r in ratios)} |")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
