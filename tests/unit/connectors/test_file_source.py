"""FileSource: discovery (bounded and continuous), the text-line reader, positions across
restores, and the PyFlink builder surface."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from flintlock.common import Duration
from flintlock.common.serialization import UnknownCharsetError
from flintlock.datastream.connectors._file_source import (
    FileSourcePathNotFoundError,
    FileSplit,
    TextLineReader,
    list_files,
)
from flintlock.datastream.connectors.file_system import FileSource, StreamFormat

from .fakes import FakeEnumeratorContext, SourceHarness, drain


def _write(path, text, encoding="utf-8"):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text.encode(encoding))
    return path


def _source(*paths, interval=None):
    builder = FileSource.for_record_stream_format(StreamFormat.text_line_format(),
                                                  *map(str, paths))
    if interval is not None:
        builder = builder.monitor_continuously(Duration.of_millis(interval))
    return builder.build()


def test_list_files_recurses_in_order_and_skips_hidden_files_and_directories(tmp_path):
    for name in ["b.txt", "a/c.txt", "a/.hidden", "_tmp/d.txt", ".x/e.txt", "a/_SUCCESS"]:
        _write(tmp_path / name, "x\n")
    found = list_files(str(tmp_path), must_exist=True)
    assert found == [f"file://{tmp_path}/a/c.txt", f"file://{tmp_path}/b.txt"]


def test_list_files_of_a_single_file(tmp_path):
    path = _write(tmp_path / "one.txt", "1\n")
    assert list_files(str(path), must_exist=True) == [f"file://{path}"]


def test_a_missing_path_fails_a_bounded_source_but_not_a_continuous_one(tmp_path):
    with pytest.raises(FileSourcePathNotFoundError) as info:
        list_files(str(tmp_path / "nope"), must_exist=True)
    assert "nope" in str(info.value)
    assert list_files(str(tmp_path / "nope"), must_exist=False) == []


def test_reader_strips_every_kind_of_line_terminator(tmp_path):
    path = _write(tmp_path / "f.txt", "a\nb\r\nc\rd")
    reader = TextLineReader("UTF-8")
    reader.add_splits([FileSplit(f"file://{path}")])
    reader.notify_no_more_splits()
    assert drain(reader, 2) == ["a", "b", "c", "d"]


def test_reader_decodes_the_charset(tmp_path):
    path = _write(tmp_path / "f.txt", "grüße\nñ\n", encoding="latin-1")
    reader = TextLineReader("ISO-8859-1")
    reader.add_splits([FileSplit(str(path))])
    reader.notify_no_more_splits()
    assert drain(reader) == ["grüße", "ñ"]


def test_utf8_position_is_the_byte_offset_of_the_next_line(tmp_path):
    path = _write(tmp_path / "f.txt", "é1\nline2\n")
    reader = TextLineReader("UTF-8")
    reader.add_splits([FileSplit(str(path))])
    assert reader.poll(1) == (["é1"], False)
    assert reader.snapshot_state(1) == [FileSplit(str(path), len("é1\n".encode()))]


def test_a_restored_reader_resumes_mid_file(tmp_path):
    path = _write(tmp_path / "f.txt", "".join(f"line {i}\n" for i in range(10)))
    reader = TextLineReader("UTF-8")
    reader.add_splits([FileSplit(str(path))])
    first, _ = reader.poll(4)
    state = reader.snapshot_state(1)
    reader.close()
    again = TextLineReader("UTF-8")
    again.restore(state)
    again.notify_no_more_splits()
    assert first + drain(again, 3) == [f"line {i}" for i in range(10)]


def test_bounded_source_reads_every_file_once_over_readers(tmp_path):
    for n in range(5):
        _write(tmp_path / f"f{n}.txt", "".join(f"{n}-{i}\n" for i in range(20)))
    harness = SourceHarness(_source(tmp_path), 3)
    assert sorted(harness.run_to_end()) == sorted(f"{n}-{i}" for n in range(5) for i in range(20))


def test_a_bounded_enumerator_does_not_list_again_after_a_restore(tmp_path):
    _write(tmp_path / "a.txt", "a\n")
    source = _source(tmp_path)
    enumerator = source.create_enumerator(1, None)
    enumerator.start(FakeEnumeratorContext(1))
    snapshot = enumerator.snapshot_state(1)
    _write(tmp_path / "b.txt", "b\n")
    restored = source.create_enumerator(1, snapshot)
    ctx = FakeEnumeratorContext(1)
    restored.start(ctx)
    restored.add_reader(0)
    assert [s.path for s in ctx.assigned[0]] == [f"file://{tmp_path}/a.txt"]


def test_continuous_source_hands_out_each_new_file_once_even_after_a_restore(tmp_path):
    _write(tmp_path / "a.txt", "a\n")
    source = _source(tmp_path, interval=100)
    assert not source.is_bounded()
    enumerator = source.create_enumerator(2, None)
    ctx = FakeEnumeratorContext(2)
    enumerator.start(ctx)
    enumerator.add_reader(0)
    enumerator.add_reader(1)
    _write(tmp_path / "b.txt", "b\n")
    ctx.tick()
    ctx.tick()
    snapshot = enumerator.snapshot_state(1)
    _write(tmp_path / "c.txt", "c\n")
    restored = source.create_enumerator(2, snapshot)
    ctx2 = FakeEnumeratorContext(2)
    restored.start(ctx2)
    restored.add_reader(0)
    restored.add_reader(1)
    ctx2.tick()
    paths = [s.path.rsplit("/", 1)[1] for c in (ctx, ctx2) for i in (0, 1) for s in c.assigned[i]]
    assert sorted(paths) == ["a.txt", "b.txt", "c.txt"]
    assert not ctx.no_more and not ctx2.no_more


def test_fsspec_urls_are_read(tmp_path):
    import fsspec

    fs = fsspec.filesystem("memory")
    fs.pipe("/k1-test/in/one.txt", b"x\ny\n")
    try:
        harness = SourceHarness(_source("memory://k1-test/in"), 1)
        assert harness.run_to_end() == ["x", "y"]
    finally:
        fs.rm("/k1-test", recursive=True)


def test_builder_surface_and_validation(tmp_path):
    builder = FileSource.for_record_stream_format(StreamFormat.text_line_format(), str(tmp_path))
    assert builder.monitor_continuously(Duration.of_seconds(1)).process_static_file_set() \
        .build().is_bounded()
    with pytest.raises(ValueError):
        builder.monitor_continuously(Duration.of_millis(0))
    with pytest.raises(ValueError):
        FileSource.for_record_stream_format(StreamFormat.text_line_format())
    with pytest.raises(TypeError):
        FileSource.for_record_stream_format("text", str(tmp_path))
    with pytest.raises(UnknownCharsetError):
        StreamFormat.text_line_format("no-such-charset")
    with pytest.raises(TypeError, match="bulk format"):
        FileSource.for_bulk_file_format(None, str(tmp_path))


operations = st.lists(st.one_of(
    st.tuples(st.just("poll"), st.integers(0, 3), st.integers(1, 9)),
    st.tuples(st.just("checkpoint"), st.just(0), st.just(0)),
    st.tuples(st.just("crash"), st.integers(1, 4), st.just(0))), max_size=25)


@settings(max_examples=40, deadline=None)
@given(sizes=st.lists(st.integers(0, 30), min_size=1, max_size=5),
       parallelism=st.integers(1, 4), ops=operations)
def test_every_line_exactly_once_under_any_crashes_and_rescales(tmp_path_factory, sizes,
                                                                parallelism, ops):
    root = tmp_path_factory.mktemp("files")
    expected = []
    for n, size in enumerate(sizes):
        lines = [f"f{n} ü{i}" for i in range(size)]
        expected.extend(lines)
        _write(root / f"f{n}.txt", "".join(line + "\n" for line in lines))
    harness = SourceHarness(_source(root), parallelism)
    snapshot, checkpoint_id = None, 0
    for op, a, b in ops:
        if op == "poll":
            harness.poll(a % len(harness.readers), b)
        elif op == "checkpoint":
            checkpoint_id += 1
            snapshot = harness.checkpoint(checkpoint_id)
        else:
            harness.restore(snapshot, a)
    assert sorted(harness.run_to_end()) == sorted(expected)


def test_relative_paths_are_resolved_where_the_job_is_built(tmp_path, monkeypatch):
    """TaskManagers work elsewhere (a Spark executor's directory, or the archives' directory
    with add_python_archive): a relative path means the submitting process's directory."""
    from flintlock.common.serialization import Encoder
    from flintlock.datastream.connectors.file_system import FileSink

    monkeypatch.chdir(tmp_path)
    source = FileSource.for_record_stream_format(
        StreamFormat.text_line_format(), "in", "memory://bucket/in").build()
    assert source.paths == (str(tmp_path / "in"), "memory://bucket/in")
    sink = FileSink.for_row_format("out", Encoder.simple_string_encoder()).build()
    assert repr(sink) == f"FileSink({str(tmp_path / 'out')!r})"
