"""The JDBC sink writers (PostgreSQL through psycopg): at-least-once batches, and exactly-once
on PostgreSQL's two-phase commit.

**Statements.** A writer buffers records in a ``Statements`` object and hands it the
connection to run them: ``SimpleStatements`` runs one parameterized statement per record
(``JdbcSink.sink``'s SQL; a plain INSERT as multi-row statements, ``_jdbc.BatchStatement``);
the table connector's upsert sink brings its own (the last change per key wins, then upserts
and deletes). ``add(record)`` buffers, ``execute(connection)`` runs what is buffered (no
commit; the buffer is kept so a retry runs it again), ``clear()`` forgets it once committed.

**At-least-once** (``BatchWriter``, Flink's ``JdbcOutputFormat``): a batch is executed and
committed when ``batch_size`` records are buffered, when ``batch_interval_ms`` has passed since
the last flush (checked as records arrive: a quiet stream's tail waits for the next checkpoint,
where Flink's timer thread would flush it), at every checkpoint (``snapshot_state`` returns
only once the batch is committed, so a restore can repeat rows, never lose one) and at the end
of the input. A failed flush is rolled back and retried (``_jdbc.with_retries``), on a new
connection when the old one was lost.

**Exactly-once** (``TwoPhaseWriter``, PostgreSQL's ``PREPARE TRANSACTION``): the records
between two checkpoints are written in one transaction on the writer's connection; at the
checkpoint's ``snapshot_state(n)`` the transaction is *prepared* (it survives the session and
a server restart, invisible to readers) under the global id ``<sink id>:<subtask>:<writer
token>:<n>``, and the writer's state records it; ``commit(n)`` (notify-complete) runs
``COMMIT PREPARED`` for every id up to ``n`` on a second, autocommit connection (the first one
may already be inside the next transaction). A checkpoint that is aborted keeps its prepared
transaction, which the next completed checkpoint commits (rolling it back would lose its rows
while the job goes on); one that never completes is rolled back at the restore:

Recovery (``restore``): every restored entry names the checkpoint it was taken at (``C``, the
one restored) and the ids it had prepared and not yet seen committed; each still prepared in
the database (``pg_prepared_xacts``) is committed — it belongs to a completed checkpoint. Then
subtask 0 rolls back every prepared transaction of this sink whose checkpoint is above ``C``
(or every one, when nothing was restored: a failure before the first completed checkpoint):
the failed attempt's work after ``C``, which the sources replay. That is safe because a
checkpoint is triggered only once every task of the new attempt is RUNNING, i.e. after all
restores; no new writer has prepared anything yet. The sink id is drawn when the sink is built
(on the driver), so it is the same in every attempt of the job; a *new* job (a script run
again) has another id and does not touch an earlier job's transactions.

The server must allow prepared transactions (``max_prepared_transactions`` > 0; PostgreSQL's
default is 0): the writer checks it at the start and says so.

All of it runs on the sink subtask's task thread.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Protocol

from flintlock.datastream.connectors._delivery import EndOfInputRule
from flintlock.datastream.connectors._jdbc import (
    BatchStatement,
    ConnectionSpec,
    JdbcConnectionError,
    connect,
    to_psycopg,
    with_retries,
)


class Statements(Protocol):
    def add(self, record: Any) -> None: ...
    def pending(self) -> int: ...
    def execute(self, connection: Any) -> None: ...
    def clear(self) -> None: ...


class SimpleStatements:
    """One statement with JDBC ``?`` markers, run for each buffered record's fields."""

    def __init__(self, sql: str, to_params: Callable[[Any], tuple[Any, ...]] = tuple) -> None:
        self._statement = BatchStatement(to_psycopg(sql))
        self._to_params = to_params
        self._buffer: list[tuple[Any, ...]] = []

    def add(self, record: Any) -> None:
        self._buffer.append(self._to_params(record))

    def pending(self) -> int:
        return len(self._buffer)

    def execute(self, connection: Any) -> None:
        if self._buffer:
            with connection.cursor() as cursor:
                self._statement.execute(cursor, self._buffer)

    def clear(self) -> None:
        self._buffer = []


@dataclass(frozen=True, slots=True)
class ExecutionSettings:
    batch_size: int = 5000
    batch_interval_ms: int = 0
    max_retries: int = 3


class BatchWriter:
    """At-least-once: executes and commits buffered records in batches (see the module)."""

    def __init__(self, spec: ConnectionSpec, statements: Statements, settings: ExecutionSettings,
                 sleep: Callable[[float], None] = time.sleep,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._spec = spec
        self._statements = statements
        self._settings = settings
        self._sleep = sleep
        self._clock = clock
        self._connection: Any = None
        self._last_flush = clock()

    def restore(self, state: list[Any]) -> None:
        """Nothing to restore: every batch was committed before its checkpoint."""

    def write(self, records: Iterable[Any]) -> None:
        add = self._statements.add
        for record in records:
            add(record)
        settings = self._settings
        if self._statements.pending() >= settings.batch_size or (
                settings.batch_interval_ms > 0
                and (self._clock() - self._last_flush) * 1000.0 >= settings.batch_interval_ms):
            self.flush()

    def flush(self) -> None:
        self._last_flush = self._clock()
        if not self._statements.pending():
            return
        with_retries(self._execute_and_commit, self._settings.max_retries, self._recover,
                     "writing a batch to the database", self._sleep)
        self._statements.clear()

    def _execute_and_commit(self) -> None:
        if self._connection is None:
            self._connection = connect(self._spec, autocommit=False)
        self._statements.execute(self._connection)
        self._connection.commit()

    def _recover(self) -> None:
        """After a failed attempt: roll back, or drop a connection that is gone."""
        connection, self._connection = self._connection, None
        if connection is None or connection.closed:
            return
        try:
            connection.rollback()
            self._connection = connection
        except Exception:  # the connection is unusable; a new one follows
            connection.close()

    def snapshot_state(self, checkpoint_id: int) -> list[Any]:
        self.flush()
        return []

    def commit(self, checkpoint_id: int) -> None:
        """Nothing is held back."""

    def end_input(self) -> None:
        self.flush()

    def close(self) -> None:
        if self._connection is not None:
            self._connection.close()
            self._connection = None


@dataclass(frozen=True, slots=True)
class PreparedState:
    """All a two-phase writer checkpoints, in one entry (see "Recovery")."""

    writer_id: str
    checkpoint_id: int  # the checkpoint this entry was taken at
    prepared: tuple[tuple[int, str], ...]  # (checkpoint id, global transaction id)


def global_id(writer_id: str, checkpoint_id: int) -> str:
    return f"{writer_id}:{checkpoint_id}"


def checkpoint_of(gid: str) -> int:
    return int(gid.rsplit(":", 1)[1])


class TwoPhaseWriter:
    """Exactly-once on ``PREPARE TRANSACTION`` / ``COMMIT PREPARED`` (see the module)."""

    def __init__(self, spec: ConnectionSpec, statements: Statements, sink_id: str,
                 subtask_index: int, settings: ExecutionSettings,
                 sleep: Callable[[float], None] = time.sleep) -> None:
        self._spec = spec
        self._statements = statements
        self._sink_id = sink_id
        self._subtask = subtask_index
        self._settings = settings
        self._sleep = sleep
        self.writer_id = f"{sink_id}:{subtask_index}:{uuid.uuid4().hex[:8]}"
        self._connection: Any = None  # the open transaction's
        self._control: Any = None  # autocommit: COMMIT / ROLLBACK PREPARED, lookups
        self._in_transaction = False
        self._prepared: list[tuple[int, str]] = []
        self._end_rule = EndOfInputRule()

    def set_checkpointing(self, enabled: bool) -> None:
        self._end_rule.set_checkpointing(enabled)

    # -- recovery ---------------------------------------------------------------------------

    def restore(self, state: list[Any]) -> None:
        self._check_server()
        if state:
            self._end_rule.saw_checkpoint()
        open_ids = self._prepared_in_database()
        restored_at = None
        for entry in state:
            restored_at = entry.checkpoint_id
            for _, gid in entry.prepared:
                if gid in open_ids:
                    self._finish(gid, "COMMIT PREPARED")
        if self._subtask == 0:
            for gid in self._prepared_in_database():
                if restored_at is None or checkpoint_of(gid) > restored_at:
                    self._finish(gid, "ROLLBACK PREPARED")

    def _check_server(self) -> None:
        row = self._control_connection().execute("SHOW max_prepared_transactions").fetchone()
        if row is None or int(row[0]) <= 0:
            raise JdbcConnectionError(
                "the exactly-once JDBC sink needs prepared transactions, which this PostgreSQL "
                "server does not allow: set max_prepared_transactions (e.g. to the sink's "
                "parallelism times 2) in postgresql.conf and restart it")

    def _prepared_in_database(self) -> set[str]:
        like = self._sink_id.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
        rows = self._control_connection().execute(
            "SELECT gid FROM pg_prepared_xacts WHERE gid LIKE %s AND database = "
            "current_database()", (like + ":%",)).fetchall()
        return {row[0] for row in rows}

    def _control_connection(self) -> Any:
        if self._control is None or self._control.closed:
            self._control = connect(self._spec, autocommit=True)
        return self._control

    def _finish(self, gid: str, command: str) -> None:
        from psycopg import sql  # the jdbc extra; connect() has checked it is there

        statement = sql.SQL(command + " {}").format(sql.Literal(gid))
        failed_before = False

        def run() -> None:
            # A failed attempt may have finished the transaction before its answer was lost
            # (a dropped connection): then there is nothing left to do.
            if failed_before and gid not in self._prepared_in_database():
                return
            self._control_connection().execute(statement)

        def after_failure() -> None:
            nonlocal failed_before
            failed_before = True
            if self._control is not None and (self._control.closed or self._control.broken):
                self._control = None

        with_retries(run, self._settings.max_retries, after_failure, f"{command} {gid!r}",
                     self._sleep)

    # -- the running transaction ------------------------------------------------------------

    def write(self, records: Iterable[Any]) -> None:
        add = self._statements.add
        for record in records:
            add(record)
        if self._statements.pending() >= self._settings.batch_size:
            self._execute()

    def _execute(self) -> None:
        """Runs the buffered statements inside the open transaction (no retry: a failure
        fails the transaction, and the job restores)."""
        if not self._statements.pending():
            return
        if self._connection is None:
            self._connection = connect(self._spec, autocommit=True)
        if not self._in_transaction:
            self._connection.execute("BEGIN")
            self._in_transaction = True
        self._statements.execute(self._connection)
        self._statements.clear()

    def snapshot_state(self, checkpoint_id: int) -> list[Any]:
        self._end_rule.saw_checkpoint()
        self._execute()
        if self._in_transaction:
            self._prepare(global_id(self.writer_id, checkpoint_id))
            self._prepared.append((checkpoint_id, global_id(self.writer_id, checkpoint_id)))
        return [PreparedState(self.writer_id, checkpoint_id, tuple(self._prepared))]

    def _prepare(self, gid: str) -> None:
        from psycopg import sql

        self._connection.execute(sql.SQL("PREPARE TRANSACTION {}").format(sql.Literal(gid)))
        self._in_transaction = False

    def commit(self, checkpoint_id: int) -> None:
        for cid, gid in [p for p in self._prepared if p[0] <= checkpoint_id]:
            self._finish(gid, "COMMIT PREPARED")
            self._prepared.remove((cid, gid))

    def end_input(self) -> None:
        """Without checkpointing, commits everything at once (nothing is restored without
        checkpoints); with checkpointing, the final checkpoint's commit does."""
        if not self._end_rule.publish_at_end():
            return
        self._execute()
        if self._in_transaction:
            self._connection.execute("COMMIT")
            self._in_transaction = False

    def close(self) -> None:
        for name in ("_connection", "_control"):
            connection = getattr(self, name)
            if connection is not None:
                connection.close()  # an open (unprepared) transaction is rolled back
                setattr(self, name, None)
        self._in_transaction = False


__all__ = ["BatchWriter", "ExecutionSettings", "PreparedState", "SimpleStatements",
           "Statements", "TwoPhaseWriter", "checkpoint_of", "global_id"]
