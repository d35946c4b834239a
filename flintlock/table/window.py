"""PyFlink's ``pyflink.table.window``: the group windows (``Tumble``, ``Slide``, ``Session``) and
over windows (``Over``) of the Table API.

The builders are here, with PyFlink's methods, so programs import and describe windows as they
do in PyFlink; running a windowed table (``Table.window(...)``, ``over_window(...)``) is event
time in the Table API, which issue 32 adds: it raises ``UnsupportedFeatureError`` until then.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

__all__ = ["GroupWindow", "Over", "OverWindow", "Session", "Slide", "Tumble"]


@dataclass(frozen=True)
class GroupWindow:
    """A described group window: its kind, size/slide/gap, time field and alias."""

    kind: str
    size: Any = None
    slide: Any = None
    gap: Any = None
    time_field: Any = None
    name: str | None = None

    def on(self, time_field: Any) -> GroupWindow:
        return replace(self, time_field=time_field)

    def every(self, slide: Any) -> GroupWindow:
        return replace(self, slide=slide)

    def alias(self, alias: str) -> GroupWindow:
        return replace(self, name=alias)


class Tumble:
    @classmethod
    def over(cls, size: Any) -> GroupWindow:
        return GroupWindow("TUMBLE", size=size)


class Slide:
    @classmethod
    def over(cls, size: Any) -> GroupWindow:
        return GroupWindow("SLIDE", size=size)


class Session:
    @classmethod
    def with_gap(cls, gap: Any) -> GroupWindow:
        return GroupWindow("SESSION", gap=gap)


@dataclass(frozen=True)
class OverWindow:
    partition_by: tuple[Any, ...] = ()
    order_by: Any = None
    preceding_: Any = None
    following_: Any = None
    name: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def preceding(self, preceding: Any) -> OverWindow:
        return replace(self, preceding_=preceding)

    def following(self, following: Any) -> OverWindow:
        return replace(self, following_=following)

    def alias(self, alias: str) -> OverWindow:
        return replace(self, name=alias)


class Over:
    @classmethod
    def order_by(cls, order_by: Any) -> OverWindow:
        return OverWindow(order_by=order_by)

    @classmethod
    def partition_by(cls, *partition_by: Any) -> _Partitioned:
        return _Partitioned(tuple(partition_by))


@dataclass(frozen=True)
class _Partitioned:
    keys: tuple[Any, ...]

    def order_by(self, order_by: Any) -> OverWindow:
        return OverWindow(partition_by=self.keys, order_by=order_by)
