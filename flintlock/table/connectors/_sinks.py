"""What every table sink factory decides the same way: the schema it writes and its
parallelism.

``sink_fields(spec, fields)``: the rows an INSERT delivers are of the query's schema
(``EXPR$0`` for an unnamed expression), already in the sink table's column order; a sink
writes them under the table's own column names and types, as Flink does (formats that name
fields, JSON, and the print connector's types need them). ``sink_parallelism(spec)``:
``sink.parallelism`` if set (at least 1), else None (the input's). Run on the driver.
"""

from __future__ import annotations

from flintlock.table.connectors._options import Options
from flintlock.table.errors import ValidationError
from flintlock.table.plan.nodes import Field, TableSpec


def sink_fields(spec: TableSpec, fields: tuple[Field, ...]) -> tuple[Field, ...]:
    return spec.physical if len(spec.physical) == len(fields) else fields


def sink_parallelism(spec: TableSpec) -> int | None:
    parallelism = Options(spec.options).get_int("sink.parallelism")
    if parallelism is not None and parallelism < 1:
        raise ValidationError(f"Invalid configured parallelism {parallelism} for table "
                              f"'{spec.name}': it must be at least 1.")
    return parallelism


__all__ = ["sink_fields", "sink_parallelism"]
