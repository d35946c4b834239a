"""Writes the Nexmark events to files, one directory per event type, so that every engine of
the benchmark reads exactly the events flintlock's ``nexmark`` source generates (issue 33).

    .venv/bin/python -m benchmarks.nexmark.generate --events 1000000 --out DIR
        [--format csv|json] [--files 2] [-D option=value ...]

``DIR/person``, ``DIR/auction`` and ``DIR/bid`` each get ``--files`` part files
(``part-<i>.csv`` or ``.json``); file i holds the events of the source's split i at that
parallelism (event numbers i, i + files, ...), in order, so a reader per file sees them in the
order the source emits them. Columns in the order of Flink's nexmark schema (``generator.
PERSON_FIELDS`` ...); timestamps as ``yyyy-MM-dd HH:mm:ss.SSS`` (UTC), which Flink's csv and
json formats read as TIMESTAMP(3); CSV without a header or quotes (no generated value holds a
comma, a quote or a line break); JSON one object per line. ``DIR/manifest.json`` records the
options and the count per type. ``-D`` takes the ``nexmark`` connector's options (e.g.
``-D tps=50000``).
"""

from __future__ import annotations

import argparse
import datetime
import json
import sys
import time
from pathlib import Path
from typing import Any, TextIO

from flintlock.datastream.connectors.nexmark.config import NexmarkConfig, from_options
from flintlock.datastream.connectors.nexmark.generator import (
    AUCTION_FIELDS,
    BID_FIELDS,
    PERSON_FIELDS,
    event,
)

KINDS = ("person", "auction", "bid")
FIELDS = (PERSON_FIELDS, AUCTION_FIELDS, BID_FIELDS)


def _text(value: Any) -> str:
    if isinstance(value, datetime.datetime):
        return value.strftime("%Y-%m-%d %H:%M:%S.%f")[:-3]
    return str(value)


def csv_line(values: tuple[Any, ...]) -> str:
    return ",".join(map(_text, values)) + "\n"


def json_line(names: tuple[str, ...], values: tuple[Any, ...]) -> str:
    return json.dumps({name: (_text(value) if isinstance(value, datetime.datetime) else value)
                       for name, value in zip(names, values, strict=True)},
                      separators=(",", ":")) + "\n"


def write(config: NexmarkConfig, out: Path, file_format: str = "csv", files: int = 2
          ) -> dict[str, int]:
    """Writes ``config.events`` events under ``out``; returns the count per event type."""
    if config.events is None:
        raise ValueError("writing files needs a bounded stream (events.num > 0)")
    handles: list[list[TextIO]] = []
    for kind in KINDS:
        (out / kind).mkdir(parents=True, exist_ok=True)
        handles.append([open(out / kind / f"part-{i}.{file_format}", "w", encoding="utf-8")
                        for i in range(files)])
    counts = [0, 0, 0]
    try:
        for number in range(config.events):
            event_type, values, _ = event(config, number)
            line = (csv_line(values) if file_format == "csv"
                    else json_line(FIELDS[event_type], values))
            handles[event_type][number % files].write(line)
            counts[event_type] += 1
    finally:
        for group in handles:
            for handle in group:
                handle.close()
    result = dict(zip(KINDS, counts, strict=True))
    manifest = {"events": config.events, "format": file_format, "files": files,
                "counts": result, "config": repr(config)}
    (out / "manifest.json").write_text(json.dumps(manifest, indent=2))
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--events", type=int, required=True)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--format", choices=["csv", "json"], default="csv")
    parser.add_argument("--files", type=int, default=2)
    parser.add_argument("-D", dest="options", action="append", default=[],
                        metavar="OPTION=VALUE")
    args = parser.parse_args(argv)
    options = dict(item.split("=", 1) for item in args.options)
    config = from_options({**options, "events.num": str(args.events)})
    started = time.perf_counter()
    counts = write(config, args.out, args.format, args.files)
    print(f"{args.events} events ({counts}) in {time.perf_counter() - started:.1f} s "
          f"-> {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
