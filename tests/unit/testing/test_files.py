"""The test kit's readers of what a job wrote: committed file lines, completed checkpoints."""

from __future__ import annotations

from flintlock.testing.files import committed_lines, completed_checkpoints


def test_committed_lines_skip_hidden_files_in_every_directory(tmp_path) -> None:
    (tmp_path / "bucket").mkdir()
    (tmp_path / "part-0.txt").write_text("a\nb\n", encoding="utf-8")
    (tmp_path / "bucket" / "part-1.txt").write_text("ü\n", encoding="utf-8")
    (tmp_path / ".part-2.inprogress").write_text("pending\n", encoding="utf-8")
    assert sorted(committed_lines(tmp_path)) == ["a", "b", "ü"]
    assert committed_lines(tmp_path / "missing") == []


def test_completed_checkpoints_are_those_with_metadata(tmp_path) -> None:
    for job, checkpoint, complete in [("j1", 2, True), ("j1", 10, True), ("j1", 11, False),
                                      ("j2", 3, True)]:
        directory = tmp_path / job / f"chk-{checkpoint}"
        directory.mkdir(parents=True)
        if complete:
            (directory / "_metadata").write_bytes(b"")
    assert completed_checkpoints(tmp_path) == [2, 3, 10]
    assert completed_checkpoints(tmp_path / "none") == []
