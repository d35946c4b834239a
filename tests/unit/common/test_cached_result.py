"""``CachedResult``: complete only with the committed parts of every subtask of one run; an
aborted part leaves nothing; a damaged part is a typed error."""

import pytest

from flintlock.common.cached_result import CachedResult, CachedResultCorruptError


def test_complete_once_every_subtask_committed_and_read_in_subtask_order(tmp_path):
    result = CachedResult(str(tmp_path / "cache"))
    second = result.part_writer(1, 2)
    second.write([3, 4])
    second.commit()
    assert not result.is_complete()
    first = result.part_writer(0, 2)
    first.write([1])
    first.write([2])
    assert not result.is_complete()
    first.commit()
    assert result.is_complete()
    assert result.read() == [1, 2, 3, 4]


def test_an_aborted_part_leaves_no_file(tmp_path):
    result = CachedResult(str(tmp_path / "cache"))
    part = result.part_writer(0, 1)
    part.write([1])
    part.abort()
    assert not result.is_complete()
    assert list((tmp_path / "cache").iterdir()) == []


def test_a_damaged_part_is_a_typed_error(tmp_path):
    result = CachedResult(str(tmp_path / "cache"))
    part = result.part_writer(0, 1)
    part.commit()
    (tmp_path / "cache" / "part-0-of-1").write_bytes(b"\x80\x05garbage")
    with pytest.raises(CachedResultCorruptError, match="invalidate"):
        result.read()
    result.release()
    assert not (tmp_path / "cache").exists()
