"""Event-time SQL operators restored from a savepoint at another parallelism give the
failure-free results (issue 32, item 7): one job runs a TUMBLE window aggregation, an interval
join, an over window and an event-time temporal join (against a view keeping each key's latest
row) over one gated source; it is stopped with a savepoint mid-stream — rows cached, windows
open, timers pending — and restarted from it at parallelism 1 -> 2 and 2 -> 1. The committed
output of both parts is exactly the output of one uninterrupted run (thread TaskManagers)."""

from __future__ import annotations

import datetime
from pathlib import Path
from typing import Any

import pytest

from flintlock.common import Types
from flintlock.common.config import Configuration
from flintlock.common.job_status import JobStatus
from flintlock.common.serialization import Encoder
from flintlock.datastream import StreamExecutionEnvironment
from flintlock.datastream.connectors.file_system import FileSink
from flintlock.table import DataTypes, Schema, StreamTableEnvironment
from flintlock.testing.executor import use_thread_executor
from flintlock.testing.files import committed_lines
from flintlock.testing.gates import FileGate, gated_records

WAIT_S = 120
N = 240
EPOCH = datetime.datetime(2024, 1, 1)
RECORDS = [(i, i % 5, EPOCH + datetime.timedelta(milliseconds=400 * i)) for i in range(N)]
"""(id, key, ts): 2.5 rows a second, in time order, so nothing is late."""

QUERIES = {
    "window": "SELECT k, window_start, COUNT(*), SUM(id) FROM TABLE(TUMBLE(TABLE t, "
              "DESCRIPTOR(ts), INTERVAL '10' SECOND)) GROUP BY k, window_start, window_end",
    "interval": "SELECT a.id, b.id FROM t a JOIN t b ON a.k = b.k AND "
                "a.ts BETWEEN b.ts - INTERVAL '3' SECOND AND b.ts",
    "over": "SELECT k, id, SUM(id) OVER (PARTITION BY k ORDER BY ts ROWS BETWEEN 2 PRECEDING "
            "AND CURRENT ROW) FROM t",
    "temporal": "SELECT o.id, r.id FROM t AS o JOIN latest FOR SYSTEM_TIME AS OF o.ts AS r "
                "ON o.k = r.k",
}


class _Line:
    """A row as one text line, tagged with its query (a map function)."""

    def __init__(self, tag: str) -> None:
        self.tag = tag

    def __call__(self, row: Any) -> str:
        return f"{self.tag} {tuple(row)!r}"


def _job(env: StreamExecutionEnvironment, gate: FileGate, out: Path) -> None:
    # keyed by k first, so each key's rows stay in time order into every keyed operator (the
    # versions the deduplication emits depend on it), at any parallelism
    source = gated_records(env, gate, RECORDS, before_gate=N // 2).key_by(lambda r: r[1]).map(
        lambda r: r, Types.ROW_NAMED(["id", "k", "ts"], [Types.LONG(), Types.LONG(),
                                                          Types.SQL_TIMESTAMP()]))
    t_env = StreamTableEnvironment.create(env)
    t_env.create_temporary_view("t", t_env.from_data_stream(source, Schema.new_builder()
                                .column("id", DataTypes.BIGINT())
                                .column("k", DataTypes.BIGINT())
                                .column("ts", DataTypes.TIMESTAMP(3))
                                .watermark("ts", "ts - INTERVAL '1' SECOND").build()))
    t_env.create_temporary_view("latest", t_env.sql_query(
        "SELECT id, k, ts FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY k ORDER BY ts DESC) "
        "AS rn FROM t WHERE MOD(id, 3) = 0) WHERE rn = 1"))
    streams = [t_env.to_data_stream(t_env.sql_query(query)).map(_Line(tag), Types.STRING())
               for tag, query in QUERIES.items()]
    lines = streams[0].union(*streams[1:])
    lines.sink_to(FileSink.for_row_format(str(out), Encoder.simple_string_encoder()).build())


def _env(tmp_path: Path, parallelism: int) -> StreamExecutionEnvironment:
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(parallelism)
    env.enable_checkpointing(200)
    env.get_checkpoint_config().set_checkpoint_storage_dir(f"file://{tmp_path}/checkpoints")
    return env


@pytest.fixture(scope="module")
def failure_free(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    monkeypatch = pytest.MonkeyPatch()
    try:
        use_thread_executor(monkeypatch)
        tmp_path = tmp_path_factory.mktemp("failure-free")
        gate = FileGate(tmp_path / "gate")
        gate.open()
        env = _env(tmp_path, 1)
        _job(env, gate, tmp_path / "out")
        env.execute("failure-free")
        return sorted(committed_lines(tmp_path / "out"))
    finally:
        monkeypatch.undo()


@pytest.mark.parametrize("before, after", [(1, 2), (2, 1)])
def test_event_time_operators_restored_at_another_parallelism_give_the_same_rows(
        monkeypatch, tmp_path, failure_free, before, after) -> None:
    use_thread_executor(monkeypatch)
    gate = FileGate(tmp_path / "gate")
    env = _env(tmp_path / "first", before)
    _job(env, gate, tmp_path / "out-first")
    client = env.execute_async("event time, first part")
    gate.wait_arrived(WAIT_S)
    assert client.jm.wait_until_running(WAIT_S)
    savepoint = client.stop_with_savepoint(
        savepoint_directory=str(tmp_path / "savepoints")).result(WAIT_S)
    assert client.jm.wait_for_status({JobStatus.FINISHED}, WAIT_S)
    first = committed_lines(tmp_path / "out-first")

    gate.open()
    env2 = _env(tmp_path / "second", after)
    env2.configure(Configuration().set_string("execution.state-recovery.path", savepoint))
    _job(env2, gate, tmp_path / "out-second")
    env2.execute("event time, second part")
    second = committed_lines(tmp_path / "out-second")

    tags = {line.split(" ", 1)[0] for line in failure_free}
    assert tags == set(QUERIES)
    assert {line.split(" ", 1)[0] for line in first} >= {"window", "over"}  # mid-stream
    assert sorted(first + second) == failure_free
