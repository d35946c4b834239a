"""PyFlink's ``ChangelogMode``: which row kinds a stream carries (``to_changelog_stream``,
``from_changelog_stream``)."""

from __future__ import annotations

from flintlock.common.types import RowKind

__all__ = ["ChangelogMode"]


class ChangelogMode:
    def __init__(self, kinds: frozenset[RowKind], keys_only_deletes: bool = False) -> None:
        self.kinds = kinds
        self.keys_only_deletes = keys_only_deletes

    def contains(self, kind: RowKind) -> bool:
        return kind in self.kinds

    def contains_only(self, kind: RowKind) -> bool:
        return self.kinds == frozenset({kind})

    def __str__(self) -> str:
        order = [RowKind.INSERT, RowKind.UPDATE_BEFORE, RowKind.UPDATE_AFTER, RowKind.DELETE]
        names = {RowKind.INSERT: "I", RowKind.UPDATE_BEFORE: "UB", RowKind.UPDATE_AFTER: "UA",
                 RowKind.DELETE: "D"}
        return "[" + ",".join(names[k] for k in order if k in self.kinds) + "]"

    @staticmethod
    def insert_only() -> ChangelogMode:
        return ChangelogMode(frozenset({RowKind.INSERT}))

    @staticmethod
    def upsert() -> ChangelogMode:
        return ChangelogMode(frozenset({RowKind.INSERT, RowKind.UPDATE_AFTER, RowKind.DELETE}))

    @staticmethod
    def all() -> ChangelogMode:
        return ChangelogMode(frozenset(RowKind))
