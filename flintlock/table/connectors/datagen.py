"""The ``datagen`` table connector: rows generated from the table's schema (Flink's
``DataGenTableSourceFactory``), a checkpointable source.

Options (Flink's names and defaults): ``rows-per-second`` (10000, for the whole source: each
of the p subtasks emits at most ``ceil(rows-per-second / p)`` rows per second of its own
clock), ``number-of-rows`` (unbounded by default), ``scan.parallelism``, and per field
``fields.<name>.kind`` (``random`` by default, or ``sequence``), ``.start`` / ``.end``
(sequence, both required), ``.min`` / ``.max`` / ``.length`` / ``.var-len`` / ``.max-past`` /
``.null-rate`` (random); see ``_datagen_values`` for what each type gets.

Splits: the source is cut into one split per subtask of the first run; split i holds rows
i, i+p, i+2p, ... of the table (a sequence column of row k holds ``start + k``, so subtask i
emits ``start+i, start+i+p, ...``, as Flink's ``SequenceGenerator`` deals them) — the rows of
a bounded source are the first ``min(number-of-rows, shortest sequence)``, split i taking its
share. A split carries its position (rows emitted) and the state of each random column's
generator, so a checkpoint restores it exactly where it was, and a restore at another
parallelism hands whole splits to the new readers (``DealingEnumerator``); nothing is emitted
twice or skipped.

Random values: each random column of split i has its own ``random.Random``, seeded from the
table's name, the column's name and i — the same rows on every run of the same table at the
same parallelism (Flink's are not reproducible; flintlock chooses determinism for tests).
TIMESTAMP, DATE and TIME values are taken from the clock when generated.

Fast path: a batch is built column-wise (a sequence column is a ``range``) and turned into
rows by ``_rows.rows_from_columns``; the reader does one clock read per poll for the rate.
A Calc over the table (a projection and/or filter with no user-defined function) is fused
into the batch loop by the planner (``create_source(..., calc=...)``, a
``codegen.compiler.compile_column_calc`` function): the reader hands the columns to it and
emits its rows, so the table's own rows are never built; the table's computed columns
(a WATERMARK's rowtime among them) are fused the same way. ``rows-per-second`` counts generated
rows, also those the fused filter drops (as Flink's source does, before the Calc).

The factory and source run on the driver; the reader on the source subtask's task thread.
"""

from __future__ import annotations

import hashlib
import math
import random
from dataclasses import dataclass, replace
from typing import Any

from flintlock.common.changelog_rows import CHANGELOG_ROWS
from flintlock.common.clock import SYSTEM_CLOCK, Clock
from flintlock.common.types import RowKind
from flintlock.common.watermark_strategy import WatermarkStrategy
from flintlock.datastream.connectors._enumeration import (
    DealingEnumerator,
    EnumeratorSnapshot,
    SplitQueueReader,
)
from flintlock.datastream.connectors.base import Source
from flintlock.datastream.data_stream import DataStream
from flintlock.table.connectors import _datagen_values as values
from flintlock.table.connectors import registry
from flintlock.table.connectors._options import Options, check_keys
from flintlock.table.connectors._rows import rows_from_columns
from flintlock.table.connectors._sources import check_bounded
from flintlock.table.errors import ValidationError
from flintlock.table.plan.nodes import Field, TableSpec

DEFAULT_ROWS_PER_SECOND = 10000
FIELD_OPTIONS = ("kind", "min", "max", "max-past", "length", "var-len", "start", "end",
                 "null-rate")


@dataclass(frozen=True)
class ColumnPlan:
    """How one column is generated: a sequence (``start``) or random (``draw``)."""

    name: str
    sequence_start: int | None
    convert: Any = None
    draw: Any = None
    seed: int = 0


@dataclass(frozen=True)
class DataGenPlan:
    """Everything a split needs to generate rows; immutable, travels with the job."""

    columns: tuple[ColumnPlan, ...]
    total_rows: int | None
    rows_per_second: float
    calc: Any = None
    """A fused Calc ``(columns, count, kind) -> rows``, or None: the table's rows."""


@dataclass(frozen=True, slots=True)
class DataGenSplit:
    """Rows ``offset, offset + stride, ...`` of the table; ``position`` of them emitted."""

    split_id: str
    offset: int
    stride: int
    position: int
    count: int | None
    random_states: tuple[Any, ...] | None = None

    @property
    def remaining(self) -> int | None:
        return None if self.count is None else self.count - self.position


def split_count(total: int | None, offset: int, stride: int) -> int | None:
    if total is None:
        return None
    base, extra = divmod(total, stride)
    return base + (1 if offset < extra else 0)


class _Splits:
    """The initial splits (one per subtask of the first run); nothing is discovered later."""

    def __init__(self, total: int | None, parallelism: int) -> None:
        self._splits = [DataGenSplit(str(i), i, parallelism, 0,
                                     split_count(total, i, parallelism))
                        for i in range(parallelism)]

    def initial(self) -> list[Any]:
        return list(self._splits)

    def discover(self) -> list[Any]:
        return []

    def snapshot(self) -> Any:
        return None


class _Throttle:
    """At most ``ceil(rate)`` rows per second of the clock, in windows of one second."""

    def __init__(self, rate: float, clock: Clock) -> None:
        self._per_window = max(1, math.ceil(rate)) if rate > 0 else None
        self._clock = clock
        self._window = -1
        self._used = 0

    def allowance(self, wanted: int) -> int:
        if self._per_window is None:
            return wanted
        window = int(self._clock.now_ms() // 1000)
        if window != self._window:
            self._window, self._used = window, 0
        return max(0, min(wanted, self._per_window - self._used))

    def used(self, count: int) -> None:
        self._used += count


class DataGenReader(SplitQueueReader):
    """Generates the rows of its splits in order, column-wise, a batch at a time."""

    def __init__(self, plan: DataGenPlan, parallelism: int, clock: Clock = SYSTEM_CLOCK) -> None:
        super().__init__()
        self._plan = plan
        self._throttle = _Throttle(plan.rows_per_second / parallelism, clock)
        self._randoms: dict[str, list[random.Random]] = {}  # split id -> a Random per column
        self._left = 0  # rows this poll may still generate (a fused filter emits fewer)

    def pending_records(self) -> int:
        return sum(s.remaining or 0 for s in tuple(self._splits))

    def poll(self, max_records: int) -> tuple[list[Any], bool]:
        allowed = self._throttle.allowance(max_records)
        if allowed == 0 and self._splits:
            return [], False
        self._left = allowed
        records, finished = super().poll(allowed)
        self._throttle.used(allowed - self._left)
        return records, finished

    def read_split(self, split: Any, budget: int, out: list[Any]) -> tuple[Any, bool]:
        calc = self._plan.calc
        while True:
            remaining = split.remaining
            count = min(budget, self._left)
            count = count if remaining is None else min(count, remaining)
            if count > 0:
                columns = self._columns(split, count)
                if calc is None:
                    out.extend(rows_from_columns(columns, count))
                else:
                    out.extend(calc(columns, count, RowKind.INSERT))
                split = replace(split, position=split.position + count)
                self._left -= count
            # a fused filter that dropped the whole chunk: generate on while this poll may
            if count == 0 or out or split.remaining == 0:
                return split, split.remaining == 0

    def _columns(self, split: DataGenSplit, count: int) -> list[Any]:
        first = split.offset + split.position * split.stride
        numbers = range(first, first + count * split.stride, split.stride)
        randoms = self._randoms_of(split)
        columns: list[Any] = []
        for index, column in enumerate(self._plan.columns):
            if column.sequence_start is not None:
                start = column.sequence_start
                columns.append(column.convert(range(numbers.start + start, numbers.stop + start,
                                                    numbers.step)))
            else:
                rng, draw = randoms[index], column.draw
                columns.append([draw(rng) for _ in range(count)])
        return columns

    def _randoms_of(self, split: DataGenSplit) -> list[random.Random]:
        found = self._randoms.get(split.split_id)
        if found is None:
            found = []
            for index, column in enumerate(self._plan.columns):
                rng = random.Random(column.seed * 1_000_003 + split.offset)
                if split.random_states is not None and split.random_states[index] is not None:
                    rng.setstate(split.random_states[index])
                found.append(rng)
            self._randoms[split.split_id] = found
        return found

    def snapshot_state(self, checkpoint_id: int) -> list[Any]:
        return [self._with_states(split) for split in self._splits]

    def _with_states(self, split: DataGenSplit) -> DataGenSplit:
        randoms = self._randoms.get(split.split_id)
        if randoms is None:
            return split
        states = tuple(rng.getstate() if column.sequence_start is None else None
                       for rng, column in zip(randoms, self._plan.columns, strict=True))
        return replace(split, random_states=states)

    def split_finished(self, split: Any) -> None:
        self._randoms.pop(split.split_id, None)


class DataGenSource(Source):
    """The source of a datagen table (a ``Source`` for ``env.from_source``)."""

    def __init__(self, plan: DataGenPlan) -> None:
        self.plan = plan

    def is_bounded(self) -> bool:
        return self.plan.total_rows is not None

    def create_enumerator(self, parallelism: int,
                          restored_state: EnumeratorSnapshot | None) -> DealingEnumerator:
        return DealingEnumerator(parallelism, restored_state,
                                 _Splits(self.plan.total_rows, parallelism),
                                 bounded=self.is_bounded())

    def create_reader(self, subtask_index: int, parallelism: int) -> DataGenReader:
        return DataGenReader(self.plan, parallelism)

    def __repr__(self) -> str:
        return f"DataGenSource({[c.name for c in self.plan.columns]}, rows={self.plan.total_rows})"


def _seed(table: str, column: str) -> int:
    digest = hashlib.sha256(f"{table}\0{column}".encode()).digest()
    return int.from_bytes(digest[:6], "big")


def plan_of(spec: TableSpec) -> DataGenPlan:
    """Checks the options against the schema and decides how each column is generated."""
    options = Options(spec.options)
    names = [f.name for f in spec.physical]
    allowed = {"connector", "rows-per-second", "number-of-rows", "scan.parallelism"}
    allowed |= {f"fields.{name}.{key}" for name in _option_names(spec.physical)
                for key in FIELD_OPTIONS}
    check_keys("datagen", spec.options, allowed)
    total = options.get_int("number-of-rows")
    if total is not None and total < 0:
        raise ValidationError(f"number-of-rows must not be negative, got {total}")
    rate = options.get_float("rows-per-second", DEFAULT_ROWS_PER_SECOND)
    columns = []
    for field, name in zip(spec.physical, names, strict=True):
        kind = options.get_str(f"fields.{name}.kind", "random")
        if kind not in ("random", "sequence"):
            raise ValidationError(f"Unsupported generator kind: {kind}")
        if kind == "sequence":
            _refuse_sequence_options(spec, name, field.type)
            convert = values.sequence_converter(name, field.type)
            start, end = values.sequence_bounds(name, field.type, options)
            length = end - start + 1
            total = length if total is None else min(total, length)
            columns.append(ColumnPlan(name, start, convert=convert))
        else:
            draw = values.nullable_draw(name, field.type, options)
            columns.append(ColumnPlan(name, None, draw=draw, seed=_seed(spec.name, name)))
    return DataGenPlan(tuple(columns), total, float(rate or 0))


def _refuse_sequence_options(spec: TableSpec, name: str, data_type: Any) -> None:
    """A type without a sequence generator has no ``start`` / ``end`` options (Flink names
    them as unsupported options)."""
    try:
        values.sequence_converter(name, data_type)
    except ValidationError:
        extra = {f"fields.{name}.start", f"fields.{name}.end"}
        check_keys("datagen", spec.options, set(spec.options) - extra)


def _option_names(fields: tuple[Field, ...]) -> list[str]:
    """Field names options may name: the columns and, inside ROW columns, ``col.field``."""
    found: list[str] = []

    def visit(prefix: str, data_type: Any) -> None:
        found.append(prefix)
        for nested in getattr(data_type, "fields", None) or ():
            visit(f"{prefix}.{nested.name}", nested.data_type)
        for attribute in ("element_type", "key_type", "value_type"):
            inner = getattr(data_type, attribute, None)
            for nested in getattr(inner, "fields", None) or ():
                visit(f"{prefix}.{nested.name}", nested.data_type)

    for field in fields:
        visit(field.name, field.type)
    return found


class DataGenFactory:
    identifier = "datagen"

    def required_options(self) -> set[str]:
        return set()

    def optional_options(self) -> set[str]:
        return {"rows-per-second", "number-of-rows", "scan.parallelism", "fields.#"}

    accepts_calc = True
    """The planner may fuse a Calc over the table into the source (``calc``)."""

    def create_source(self, spec: TableSpec, context: registry.ConnectorContext,
                      calc: Any = None) -> DataStream:
        """The table's source; with ``calc`` (a compiled column Calc, see the module) the rows
        it emits are the Calc's, not the table's."""
        source = DataGenSource(replace(plan_of(spec), calc=calc))
        check_bounded(spec, context, source.is_bounded())
        stream = context.env.from_source(source, WatermarkStrategy.no_watermarks(),
                                         f"datagen[{spec.name}]", CHANGELOG_ROWS)
        parallelism = Options(spec.options).get_int("scan.parallelism")
        if parallelism is not None:
            stream.set_parallelism(parallelism)
        return stream

    def create_sink(self, stream: DataStream, spec: TableSpec, fields: tuple[Field, ...],
                    context: registry.ConnectorContext) -> Any:
        raise ValidationError(f"Connector '{self.identifier}' can only be used as a source. "
                              "It cannot be used as a sink.")

    def accepts_updates(self, spec: TableSpec) -> bool:
        return False


FACTORY = DataGenFactory()
registry.FACTORIES[FACTORY.identifier] = FACTORY

__all__ = ["DataGenFactory", "DataGenReader", "DataGenSource", "DataGenSplit", "plan_of"]
