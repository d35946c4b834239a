"""The plan nodes of time-bounded joins (issue 32), next to ``nodes.Join``.

``IntervalJoin``: an equi-join whose ON condition also bounds one input's time attribute by
the other's (``a.ts BETWEEN b.ts - INTERVAL '5' SECOND AND b.ts``), both rowtimes or both
proctimes; ``plan.joins.time_bounded`` finds it. Its fields are the left then the right fields,
time attributes kept (an interval join's output is append-only and its rowtimes stay, as in
Flink); ``condition`` is what remains of the ON condition besides the keys and the bounds.

``TemporalJoin``: ``JOIN versioned FOR SYSTEM_TIME AS OF left.rowtime`` (``plan.temporal_join``);
its fields are the left fields then the versioned table's, time attributes kept.

Frozen, like every plan node; no behaviour beyond describing.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from flintlock.table.plan import nodes as n
from flintlock.table.plan.rex import Rex

__all__ = ["IntervalJoin", "TemporalJoin"]


@dataclass(frozen=True, eq=False)
class _KeyedJoin(n.PlanNode):
    """What both joins have: two inputs, equi-keys and the rest of the ON condition."""

    left: n.PlanNode = field(default=None)  # type: ignore[assignment]
    right: n.PlanNode = field(default=None)  # type: ignore[assignment]
    kind: n.JoinKind = n.JoinKind.INNER
    left_keys: tuple[int, ...] = ()
    right_keys: tuple[int, ...] = ()
    condition: Rex | None = None
    """The rest of the ON condition, over the left fields followed by the right fields."""
    left_time: int = 0
    """The index of the left input's time attribute."""
    right_time: int = 0
    """The index of the right input's time attribute (in the right input)."""

    @property
    def inputs(self) -> tuple[n.PlanNode, ...]:
        return (self.left, self.right)

    def _keys(self) -> str:
        return ", ".join(f"{self.left.names[a]} = {self.right.names[b]}"
                         for a, b in zip(self.left_keys, self.right_keys, strict=True))


@dataclass(frozen=True, eq=False)
class IntervalJoin(_KeyedJoin):
    lower_bound: int = 0
    upper_bound: int = 0
    """``right.time + lower_bound <= left.time <= right.time + upper_bound``, milliseconds."""
    proctime: bool = False
    """Whether the bounds are on processing time (else on event time)."""

    def explain_summary(self) -> str:
        time = "ProcTime" if self.proctime else "RowTime"
        return (f"IntervalJoin(joinType=[{self.kind.value}], keys=[{self._keys()}], "
                f"windowBounds=[isRowTime={str(not self.proctime).lower()}, leftLowerBound="
                f"{self.lower_bound}, leftUpperBound={self.upper_bound}, leftTimeIndex="
                f"{self.left_time}, rightTimeIndex={self.right_time}], {time})")


@dataclass(frozen=True, eq=False)
class TemporalJoin(_KeyedJoin):
    """``left JOIN versioned FOR SYSTEM_TIME AS OF left.rowtime``: each left row with the
    version of the right input's primary key valid at its rowtime (event time); ``kind`` is
    INNER or LEFT."""

    def explain_summary(self) -> str:
        return (f"TemporalJoin(joinType=[{self.kind.value}], keys=[{self._keys()}], asOf=["
                f"{self.left.names[self.left_time]}], version=["
                f"{self.right.names[self.right_time]}])")
