"""Partition pruning of a partitioned ``filesystem`` table's read (Flink's
``SupportsPartitionPushDown``, for the simple case).

When the planner fuses a Calc over the table into its source, it hands the filesystem
connector the Calc's condition too (``prunes_partitions``). The conjuncts of that condition
that read partition columns only (``dt = '2020-05-01'``, ``hr BETWEEN 10 AND 12``,
``dt IN (...)``, any expression over them) are compiled once; a partition directory whose
values make one of them anything but TRUE is not read at all. The Calc still applies the
whole condition to the rows read, so pruning only skips files, never changes a result.
A condition over data columns, an OR mixing partition and data columns, or a Calc that is
not fused (one calling a function that needs ``open``) prunes nothing.

Pure functions, run on the driver when the job is planned.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from flintlock.common.types import row_of
from flintlock.table import types as t
from flintlock.table.codegen.compiler import compile_predicate
from flintlock.table.plan.rex import Call, Rex, input_refs

__all__ = ["conjuncts", "partition_predicate"]


def conjuncts(condition: Rex) -> list[Rex]:
    """The operands of nested ANDs (the condition itself when it is no AND)."""
    if isinstance(condition, Call) and condition.function == "AND":
        return [part for operand in condition.operands for part in conjuncts(operand)]
    return [condition]


def partition_predicate(condition: Rex | None, partition: Sequence[int], width: int
                        ) -> Callable[[Sequence[Any]], bool] | None:
    """``values -> keep`` over one directory's partition values (in ``partition`` order), or
    None when no conjunct of ``condition`` reads partition columns only."""
    if condition is None:
        return None
    keys = set(partition)
    parts = [c for c in conjuncts(condition) if input_refs(c) and input_refs(c) <= keys]
    if not parts:
        return None
    test = compile_predicate(parts[0] if len(parts) == 1 else Call(
        t.BooleanType(True), "AND", tuple(parts)), "_partition_filter")
    positions = list(partition)

    def keep(values: Sequence[Any]) -> bool:
        row: list[Any] = [None] * width
        for index, value in zip(positions, values, strict=True):
            row[index] = value
        return bool(test(row_of(row)))
    return keep
