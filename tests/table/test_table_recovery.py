"""SQL jobs keep Flink's guarantees on flintlock's runtime: a GROUP BY stopped with a savepoint
and restored at another parallelism continues its counts exactly; a SQL job whose Python UDF
fails once mid-stream writes exactly the failure-free rows into a filesystem table."""

from pathlib import Path

from flintlock.common.config import Configuration
from flintlock.common.job_status import JobStatus
from flintlock.common.typeinfo import Types
from flintlock.datastream import StreamExecutionEnvironment
from flintlock.table import DataTypes, StreamTableEnvironment
from flintlock.table.udf import udf
from flintlock.testing.executor import use_thread_executor
from flintlock.testing.faults import RaiseOnce
from flintlock.testing.files import committed_lines
from flintlock.testing.gates import FileGate, gated_numbers

WAIT_S = 120
N = 600


def _counts(env, gate, t_env_config=None):
    numbers = gated_numbers(env, gate, N, before_gate=150).map(lambda x: x, Types.LONG())
    t_env = StreamTableEnvironment.create(env)
    t_env.create_temporary_view("numbers", t_env.from_data_stream(numbers))
    counts = t_env.sql_query("SELECT MOD(f0, 5) AS k, COUNT(*) AS c, SUM(f0) AS s "
                             "FROM numbers GROUP BY MOD(f0, 5)")
    return t_env.to_changelog_stream(counts)


def _env(tmp_path, parallelism):
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(parallelism)
    env.enable_checkpointing(200)
    env.get_checkpoint_config().set_checkpoint_storage_dir(f"file://{tmp_path}/checkpoints")
    return env


def test_a_group_by_restored_at_another_parallelism_continues_its_counts(monkeypatch,
                                                                          tmp_path):
    use_thread_executor(monkeypatch)
    gate = FileGate(tmp_path / "gate")
    env = _env(tmp_path / "first", parallelism=2)
    _counts(env, gate).print()
    client = env.execute_async("counts, first part")
    gate.wait_arrived(WAIT_S)
    assert client.jm.wait_until_running(WAIT_S)
    savepoint = client.stop_with_savepoint(
        savepoint_directory=str(tmp_path / "savepoints")).result(WAIT_S)
    assert client.jm.wait_for_status({JobStatus.FINISHED}, WAIT_S)

    gate.open()
    env2 = _env(tmp_path / "second", parallelism=3)
    env2.configure(Configuration().set_string("execution.state-recovery.path", savepoint))
    rows = list(_counts(env2, gate).execute_and_collect())
    final = {}
    for row in rows:
        k, c, s = row
        final[k] = (c, s)
    expected = {k: (N // 5, sum(x for x in range(N) if x % 5 == k)) for k in range(5)}
    assert final == expected
    # the restored job continued: its first results per key count on from the savepoint
    first_counts = {}
    for row in rows:
        first_counts.setdefault(row[0], row[1])
    assert all(count > 1 for count in first_counts.values())


def test_a_failing_udf_job_writes_exactly_the_failure_free_rows(monkeypatch, tmp_path):
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
        return x * 10

    t_env.create_temporary_function("checked", checked)
    out = Path(tmp_path) / "out"
    t_env.execute_sql(
        "CREATE TABLE src (id BIGINT) WITH ('connector' = 'datagen', 'fields.id.kind' = "
        "'sequence', 'fields.id.start' = '1', 'fields.id.end' = '2000', "
        "'rows-per-second' = '4000')")
    t_env.execute_sql(f"CREATE TABLE dst (id BIGINT, v BIGINT) WITH ('connector' = "
                      f"'filesystem', 'path' = '{out}', 'format' = 'csv')")
    t_env.execute_sql("INSERT INTO dst SELECT id, checked(id) FROM src").wait(WAIT_S * 1000)
    assert (tmp_path / "failed-once").exists()
    lines = sorted(committed_lines(out), key=lambda line: int(line.split(",")[0]))
    assert lines == [f"{i},{i * 10}" for i in range(1, 2001)]
