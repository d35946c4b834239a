"""An interval join keeps Flink's guarantees on flintlock's runtime (issue 32): a SQL job
joining two event-time tables within a time range, whose Python UDF fails once mid-stream,
restores the join's cached rows and timers from its last checkpoint and writes exactly the
failure-free rows into a filesystem table (thread TaskManagers, parallelism 2)."""

from pathlib import Path

from flintlock.datastream import StreamExecutionEnvironment
from flintlock.table import DataTypes, StreamTableEnvironment
from flintlock.table.udf import udf
from flintlock.testing.executor import use_thread_executor
from flintlock.testing.faults import RaiseOnce
from flintlock.testing.files import committed_lines

WAIT_S = 120
N = 1200


def test_a_failing_interval_join_job_writes_exactly_the_failure_free_rows(monkeypatch,
                                                                         tmp_path):
    use_thread_executor(monkeypatch)
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(2)
    env.enable_checkpointing(100)
    env.get_checkpoint_config().set_checkpoint_storage_dir(f"file://{tmp_path}/checkpoints")
    t_env = StreamTableEnvironment.create(env)
    fail_once = RaiseOnce(str(tmp_path / "failed-once"), 700)

    @udf(result_type=DataTypes.BIGINT())
    def checked(x):
        fail_once(x)
        return x

    t_env.create_temporary_function("checked", checked)
    for name in ("a", "b"):
        t_env.execute_sql(f"""
            CREATE TABLE {name} (id BIGINT,
                ts AS TIMESTAMPADD(SECOND, CAST(id AS INT), TIMESTAMP '2024-01-01 00:00:00'),
                WATERMARK FOR ts AS ts - INTERVAL '1' SECOND)
            WITH ('connector' = 'datagen', 'fields.id.kind' = 'sequence',
                  'fields.id.start' = '1', 'fields.id.end' = '{N}',
                  'rows-per-second' = '3000')""")
    out = Path(tmp_path) / "out"
    t_env.execute_sql(f"CREATE TABLE dst (a BIGINT, b BIGINT) WITH ('connector' = "
                      f"'filesystem', 'path' = '{out}', 'format' = 'csv')")
    t_env.execute_sql(
        "INSERT INTO dst SELECT checked(a.id), b.id FROM a JOIN b ON MOD(a.id, 2) = "
        "MOD(b.id, 2) AND a.ts BETWEEN b.ts - INTERVAL '2' SECOND AND b.ts"
    ).wait(WAIT_S * 1000)
    assert (tmp_path / "failed-once").exists()
    expected = sorted((i, j) for i in range(1, N + 1) for j in (i, i + 2) if j <= N)
    lines = sorted(tuple(int(v) for v in line.split(",")) for line in committed_lines(out))
    assert lines == expected
