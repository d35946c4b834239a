"""What every table source factory checks the same way: an unbounded source is refused in
batch mode, with Flink's error (``Querying an unbounded table '...' in batch mode is not
allowed``). Runs on the driver."""

from __future__ import annotations

from flintlock.table.connectors.registry import ConnectorContext
from flintlock.table.errors import ValidationError
from flintlock.table.plan.nodes import TableSpec


def check_bounded(spec: TableSpec, context: ConnectorContext, bounded: bool) -> None:
    if not bounded and not context.streaming:
        raise ValidationError(f"Querying an unbounded table '{spec.name}' in batch mode is not "
                              "allowed. The table source is unbounded.")


__all__ = ["check_bounded"]
