"""The exactly-once JDBC sink on embedded Spark: the writers run in Spark's Python workers
against a PostgreSQL the test starts (tests/unit/connectors/postgres_server.py); a worker is
killed after a checkpoint completed, with rows of the next checkpoint already in its open
transaction and maybe prepared ones, and the restored job still writes every row once and
leaves no prepared transaction behind."""

from __future__ import annotations

import sys

import cloudpickle
import pytest

from flintlock.common import Row, Types
from flintlock.common.config import Configuration
from flintlock.datastream import StreamExecutionEnvironment
from flintlock.datastream.connectors.jdbc import (
    JdbcConnectionOptions,
    JdbcExecutionOptions,
    JdbcSink,
)
from flintlock.testing.faults import ExitOnce
from flintlock.testing.files import completed_checkpoints
from flintlock.testing.gates import FileGate, gated_numbers, open_when
from tests.unit.connectors.postgres_server import postgres_server

pytestmark = [pytest.mark.spark, pytest.mark.slow]
cloudpickle.register_pickle_by_value(sys.modules[__name__])

ROW = Types.ROW([Types.LONG(), Types.STRING()])


def _labelled(n):
    return Row(n, f"n{n}")


def test_exactly_once_jdbc_sink_with_a_killed_task_manager(tmp_path):
    config = Configuration().set_string("execution.checkpointing.dir", str(tmp_path / "chk"))
    config.set_string("restart-strategy.type", "fixed-delay")
    config.set_string("restart-strategy.fixed-delay.delay", "100 ms")
    config.set_string("restart-strategy.fixed-delay.attempts", "2")
    env = StreamExecutionEnvironment.get_execution_environment(config)
    env.set_parallelism(2)
    env.enable_checkpointing(200)
    with postgres_server() as server:
        with server.connect() as db:
            db.execute("CREATE TABLE numbers (n BIGINT, label TEXT)")
            options = (JdbcConnectionOptions.JdbcConnectionOptionsBuilder()
                       .with_url(server.jdbc_url).with_user_name("postgres").build())
            sink = JdbcSink.exactly_once_sink(
                "INSERT INTO numbers (n, label) VALUES (?, ?)", ROW, options,
                JdbcExecutionOptions.builder().with_batch_size(100).build())
            marker = tmp_path / "died"
            gate = FileGate(tmp_path / "gate")
            opener = open_when(gate, lambda: completed_checkpoints(tmp_path / "chk"))
            (gated_numbers(env, gate, 6000, before_gate=1000)
             .map(ExitOnce(marker, 2500)).map(_labelled, ROW).add_sink(sink))
            env.execute("jdbc on spark")
            opener.join(60)
            rows = db.execute("SELECT n, label FROM numbers ORDER BY n").fetchall()
            prepared = db.execute("SELECT count(*) FROM pg_prepared_xacts").fetchone()[0]
    assert marker.exists(), "the TaskManager was never killed"
    assert [tuple(r) for r in rows] == [(n, f"n{n}") for n in range(6000)]
    assert prepared == 0
