"""The DataStream JDBC sinks (``flintlock.datastream.connectors.jdbc``) end to end against a real
PostgreSQL started by the tests (``tests/unit/connectors/postgres_server.py``), on TaskManager
threads: every row written, at-least-once and exactly-once through a failure in the middle, and
the two-phase writer's recovery rules (commit what a completed checkpoint prepared, roll back
what came after it)."""

import psycopg
import pytest

from flintlock.common import Row, Types
from flintlock.datastream import CheckpointingMode
from flintlock.datastream.connectors._jdbc import ConnectionSpec, JdbcConnectionError
from flintlock.datastream.connectors._jdbc_sink import (
    ExecutionSettings,
    PreparedState,
    SimpleStatements,
    TwoPhaseWriter,
)
from flintlock.datastream.connectors.jdbc import (
    JdbcConnectionOptions,
    JdbcExecutionOptions,
    JdbcSink,
)
from flintlock.testing.environments import local_environment
from flintlock.testing.faults import RaiseOnce
from flintlock.testing.files import completed_checkpoints
from flintlock.testing.gates import FileGate, gated_numbers, open_when
from tests.unit.connectors.postgres_server import postgres_server

ROW_TYPE = Types.ROW([Types.LONG(), Types.STRING()])
INSERT = "INSERT INTO numbers (n, label) VALUES (?, ?)"


@pytest.fixture(scope="module")
def postgres():
    with postgres_server() as server:
        yield server


@pytest.fixture
def db(postgres):
    with postgres.connect() as connection:
        # what an earlier test left holds locks on the table: prepared transactions and
        # sessions still open; both go before the DROP, which would wait for them
        for (gid,) in connection.execute("SELECT gid FROM pg_prepared_xacts").fetchall():
            connection.execute(f"ROLLBACK PREPARED '{gid}'")
        connection.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                           "WHERE pid <> pg_backend_pid() AND backend_type = 'client backend'")
        connection.execute("SET lock_timeout = '20s'")
        connection.execute("DROP TABLE IF EXISTS numbers")
        connection.execute("CREATE TABLE numbers (n BIGINT, label TEXT)")
        yield connection


def _options(postgres):
    return (JdbcConnectionOptions.JdbcConnectionOptionsBuilder().with_url(postgres.jdbc_url)
            .with_driver_name("org.postgresql.Driver").with_user_name("postgres").build())


def _rows(db):
    return [tuple(r) for r in db.execute("SELECT n, label FROM numbers ORDER BY n").fetchall()]


def _labelled(n):
    return Row(n, f"n{n}")


def test_sink_writes_every_row_in_batches(executor, tmp_path, postgres, db):
    env = local_environment(tmp_path, 2)
    numbers = env.from_collection(list(range(2500)), Types.LONG())
    execution = JdbcExecutionOptions.builder().with_batch_size(300).with_max_retries(1).build()
    numbers.map(_labelled, ROW_TYPE).add_sink(
        JdbcSink.sink(INSERT, ROW_TYPE, _options(postgres), execution))
    env.execute("jdbc sink")
    assert _rows(db) == [(n, f"n{n}") for n in range(2500)]


@pytest.mark.parametrize("exactly_once", [False, True])
def test_a_failure_in_the_middle_loses_nothing(executor, tmp_path, postgres, db, exactly_once):
    env = local_environment(tmp_path, 2, restart_attempts=3)
    env.enable_checkpointing(200, CheckpointingMode.EXACTLY_ONCE)
    marker = tmp_path / "crashed"
    # each reader holds after 1000 numbers until a checkpoint completed; then the numbers up
    # to 2500 come in a burst, written in batches of 100, and 2500 fails the job once: rows
    # after the restored checkpoint reached the database (an at-least-once sink writes them
    # twice, an exactly-once sink only once)
    gate = FileGate(tmp_path / "gate")
    opener = open_when(gate, lambda: completed_checkpoints(tmp_path / "chk"))
    build = JdbcSink.exactly_once_sink if exactly_once else JdbcSink.sink
    sink = build(INSERT, ROW_TYPE, _options(postgres),
                 JdbcExecutionOptions.builder().with_batch_size(100).build())
    (gated_numbers(env, gate, 6000, before_gate=1000)
     .map(RaiseOnce(marker, 2500))
     .map(_labelled, ROW_TYPE).add_sink(sink))
    env.execute("jdbc sink with a crash")
    opener.join(60)
    assert marker.exists(), "the failure was never injected"
    assert len(executor.launchers[-1].attempts) >= 2
    written = _rows(db)
    expected = [(n, f"n{n}") for n in range(6000)]
    if exactly_once:
        assert written == expected
        assert db.execute("SELECT count(*) FROM pg_prepared_xacts").fetchone()[0] == 0
    else:
        assert sorted(set(written)) == expected
        assert len(written) > len(expected), "no row was written twice: the test proves nothing"


def _writer(postgres, sink_id, subtask=0):
    spec = ConnectionSpec(postgres.jdbc_url, "postgres")
    return TwoPhaseWriter(spec, SimpleStatements(INSERT), sink_id, subtask,
                          ExecutionSettings(batch_size=10), sleep=lambda s: None)


def _prepared(db):
    return sorted(r[0] for r in db.execute("SELECT gid FROM pg_prepared_xacts").fetchall())


def test_two_phase_writer_prepares_at_the_checkpoint_and_commits_on_completion(postgres, db):
    writer = _writer(postgres, "sink-a")
    writer.restore([])
    writer.write([(1, "a"), (2, "b")])
    [state] = writer.snapshot_state(5)
    assert state.checkpoint_id == 5 and [c for c, _ in state.prepared] == [5]
    assert _prepared(db) == [f"{writer.writer_id}:5"] and _rows(db) == []
    writer.write([(3, "c")])  # the next checkpoint's transaction is open meanwhile
    writer.commit(5)
    assert _rows(db) == [(1, "a"), (2, "b")] and _prepared(db) == []
    writer.snapshot_state(6)
    writer.commit(6)
    writer.close()
    assert _rows(db) == [(1, "a"), (2, "b"), (3, "c")]


def test_an_aborted_checkpoint_is_committed_by_the_next_one(postgres, db):
    writer = _writer(postgres, "sink-b")
    writer.restore([])
    writer.write([(1, "a")])
    writer.snapshot_state(1)  # checkpoint 1 is aborted: no commit(1)
    writer.write([(2, "b")])
    writer.snapshot_state(2)
    writer.commit(2)
    writer.close()
    assert _rows(db) == [(1, "a"), (2, "b")] and _prepared(db) == []


def test_restore_commits_the_completed_checkpoint_and_rolls_back_the_rest(postgres, db):
    failed = _writer(postgres, "sink-c", subtask=0)
    failed.restore([])
    failed.write([(1, "a")])
    [at_3] = failed.snapshot_state(3)  # checkpoint 3 completes, its commit never runs
    failed.write([(2, "b")])
    failed.snapshot_state(4)  # checkpoint 4 never completes
    other = _writer(postgres, "sink-c", subtask=1)
    other.restore([])
    other.write([(9, "z")])
    other.snapshot_state(4)
    failed.write([(3, "c")])  # open, never prepared: the failure rolls it back
    failed.close()
    other.close()
    assert len(_prepared(db)) == 3
    restored = _writer(postgres, "sink-c", subtask=0)
    restored.restore([at_3, PreparedState(other.writer_id, 3, ())])
    assert _rows(db) == [(1, "a")] and _prepared(db) == []
    restored.close()


def test_a_fresh_start_rolls_back_what_the_sink_left_prepared(postgres, db):
    old = _writer(postgres, "sink-d")
    old.restore([])
    old.write([(1, "a")])
    old.snapshot_state(1)
    old.close()
    unrelated = _writer(postgres, "another-sink")
    unrelated.restore([])
    unrelated.write([(2, "b")])
    unrelated.snapshot_state(1)
    unrelated.close()
    _writer(postgres, "sink-d").restore([])
    assert _prepared(db) == [f"{unrelated.writer_id}:1"]


class _NoPreparedTransactions:
    """A control connection to a server with PostgreSQL's default of 0 prepared transactions."""

    closed = False

    def execute(self, statement):
        assert statement == "SHOW max_prepared_transactions"
        return self

    def fetchone(self):
        return ("0",)


def test_a_server_without_prepared_transactions_is_refused(postgres):
    writer = _writer(postgres, "sink-e")
    writer._control = _NoPreparedTransactions()
    with pytest.raises(JdbcConnectionError, match="max_prepared_transactions"):
        writer.restore([])


def test_an_unreachable_database_is_a_connection_error(postgres):
    spec = ConnectionSpec(postgres.jdbc_url.replace("/postgres", "/nosuchdb"), "postgres")
    writer = TwoPhaseWriter(spec, SimpleStatements(INSERT), "x", 0, ExecutionSettings())
    with pytest.raises(JdbcConnectionError, match=r"cannot connect.*nosuchdb"):
        writer.restore([])


def test_a_commit_whose_answer_was_lost_is_not_retried_into_an_error(postgres, db):
    writer = _writer(postgres, "sink-f")
    writer.restore([])
    writer.write([(1, "a")])
    writer.snapshot_state(1)
    control = writer._control_connection()
    real_execute = control.execute

    def commit_then_lose_the_answer(statement, *args):
        result = real_execute(statement, *args)
        text = statement if isinstance(statement, str) else statement.as_string(control)
        if text.startswith("COMMIT PREPARED"):
            raise psycopg.OperationalError("server closed the connection unexpectedly")
        return result
    control.execute = commit_then_lose_the_answer
    writer.commit(1)  # the retry sees the transaction committed, and stops
    control.execute = real_execute
    writer.close()
    assert _rows(db) == [(1, "a")] and _prepared(db) == []
