"""Deduplication and changelog normalisation (``flintlock.datastream.changelog.deduplicate``,
issue 28): keep-first emits each key's first row once; keep-last emits +I then -U/+U (or +U
alone); normalising an upsert changelog drops repeats and turns deletions into -D of the
stored full row, as Flink's deduplicate functions do."""

from __future__ import annotations

import pytest

from flintlock.datastream.changelog.deduplicate import (
    ChangelogNormalizeFunction,
    KeepFirstRowFunction,
    KeepLastRowFunction,
)
from flintlock.datastream.changelog.errors import NotInsertOnlyError
from flintlock.datastream.changelog.rows import key_selector
from tests.table.changelog_harness import Harness, r


def _run(function) -> Harness:
    return Harness(function, [key_selector((0,))])


def test_keep_first_row_forwards_only_the_first_row_of_each_key() -> None:
    h = _run(KeepFirstRowFunction())
    assert h.feed(r("+I", "a", 1), r("+I", "b", 2), r("+I", "a", 3)) == ["+I[a, 1]", "+I[b, 2]"]
    with pytest.raises(NotInsertOnlyError):
        h.feed(r("-D", "a", 1))


def test_keep_last_row_updates_the_previous_row_and_drops_repeats() -> None:
    h = _run(KeepLastRowFunction())
    assert h.feed(r("+I", "a", 1), r("+I", "b", 2), r("+I", "a", 3), r("+I", "a", 3)) == [
        "+I[a, 1]", "+I[b, 2]", "-U[a, 1]", "+U[a, 3]"]
    retained = _run(KeepLastRowFunction(state_retention_ms=1000))
    assert retained.feed(r("+I", "a", 1), r("+I", "a", 1)) == [
        "+I[a, 1]", "-U[a, 1]", "+U[a, 1]"]


def test_keep_last_row_without_update_before_or_insert() -> None:
    h = _run(KeepLastRowFunction(generate_update_before=False))
    assert h.feed(r("+I", "a", 1), r("+I", "a", 2)) == ["+I[a, 1]", "+U[a, 2]"]
    h = _run(KeepLastRowFunction(generate_update_before=False, generate_insert=False))
    assert h.feed(r("+I", "a", 1), r("+I", "a", 2)) == ["+U[a, 1]", "+U[a, 2]"]


def test_changelog_normalize_completes_an_upsert_changelog() -> None:
    h = _run(ChangelogNormalizeFunction())
    assert h.feed(r("+U", "a", 1), r("+U", "a", 1), r("+U", "a", 2)) == [
        "+I[a, 1]", "-U[a, 1]", "+U[a, 2]"]
    assert h.feed(r("-D", "a", None)) == ["-D[a, 2]"]
    assert h.feed(r("-D", "a", None), r("-U", "b", 1)) == []
    retained = _run(ChangelogNormalizeFunction(generate_update_before=False,
                                               state_retention_ms=1000))
    assert retained.feed(r("+I", "a", 1), r("+I", "a", 1)) == ["+I[a, 1]", "+U[a, 1]"]
