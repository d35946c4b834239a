"""Partition commit of partitioned ``filesystem`` tables (issue 32, item 5): the triggers and
the time extractor as pure functions, the committer waiting for every writer subtask, the
options and their errors, and SQL jobs on thread TaskManagers writing ``_SUCCESS`` files in
batch and streaming mode, with a custom (Python) policy."""

import datetime
import os
import re

import pytest

from flintlock.table import EnvironmentSettings, TableEnvironment
from flintlock.table.connectors._options import Options
from flintlock.table.connectors.partition_commit import (
    DefaultPartTimeExtractor,
    PartitionCommitPolicyError,
    PartitionCommitSettings,
    epoch_millis,
)
from flintlock.table.connectors.partition_committer import (
    END_INPUT,
    CommitterSettings,
    PartitionCommitInfo,
    PartitionCommitter,
    PartitionTimeCommitTrigger,
    ProcTimeCommitTrigger,
    partition_values,
)
from flintlock.table.errors import ValidationError
from flintlock.testing.clock import ManualClock
from flintlock.testing.executor import use_thread_executor

HOUR = 3600 * 1000
UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


class RecordingPolicy:
    """A custom policy: appends what it committed to the file named by its parameter."""

    def __init__(self, log_path, tag="custom"):
        self.log_path = log_path
        self.tag = tag

    def commit(self, context):
        with open(self.log_path, "a", encoding="utf-8") as handle:
            handle.write(f"{self.tag} {context.table_name()} {context.partition_spec()} "
                         f"{os.path.basename(context.partition_path())}\n")


def _settings(**options):
    return PartitionCommitSettings.from_options(Options(options))


# -- pure parts ----------------------------------------------------------------------------------

def test_default_extractor_reads_the_first_value_or_the_pattern():
    assert DefaultPartTimeExtractor().extract(["dt"], ["2020-05-01"]) == datetime.datetime(
        2020, 5, 1)
    pattern = DefaultPartTimeExtractor("$dt $hr:00:00")
    assert pattern.extract(["dt", "hr"], ["2020-05-01", "7"]) == datetime.datetime(
        2020, 5, 1, 7)
    formatted = DefaultPartTimeExtractor("$dt$hr", "yyyyMMddHH")
    assert formatted.extract(["dt", "hr"], ["20200501", "23"]) == datetime.datetime(
        2020, 5, 1, 23)
    assert DefaultPartTimeExtractor().extract(["t"], ["2020-5-1 1:2:3.5"]) == (
        datetime.datetime(2020, 5, 1, 1, 2, 3, 500000))
    with pytest.raises(ValueError, match="could not be parsed"):
        DefaultPartTimeExtractor().extract(["dt"], ["yesterday"])


def test_partition_time_is_read_in_the_watermark_time_zone():
    moment = datetime.datetime(2020, 5, 1, 8)
    utc = epoch_millis(moment, "UTC")
    assert epoch_millis(moment, "Asia/Shanghai") == utc - 8 * HOUR
    assert epoch_millis(moment, "GMT-08:00") == utc + 8 * HOUR


def test_partition_values_are_unescaped():
    assert partition_values("dt=a%2Fb%3Dc/hr=3") == (["dt", "hr"], ["a/b=c", "3"])


def test_process_time_trigger_waits_for_the_delay():
    trigger = ProcTimeCommitTrigger(delay_ms=1000)
    trigger.add_partition("dt=a", now_ms=0)
    trigger.add_partition("dt=a", now_ms=900)  # first seen at 0
    assert trigger.committable(1, now_ms=1000) == []
    assert trigger.committable(2, now_ms=1001) == ["dt=a"]
    assert trigger.committable(3, now_ms=5000) == []
    immediate = ProcTimeCommitTrigger(delay_ms=0)
    immediate.add_partition("dt=b", now_ms=7)
    assert immediate.committable(1, now_ms=7) == ["dt=b"]


def test_partition_time_trigger_uses_the_watermark_of_the_checkpoint():
    trigger = PartitionTimeCommitTrigger(HOUR, "UTC", DefaultPartTimeExtractor("$dt $hr:00:00"))
    start = epoch_millis(datetime.datetime(2020, 5, 1, 10), "UTC")
    for partition in ("dt=2020-05-01/hr=10", "dt=2020-05-01/hr=11"):
        trigger.add_partition(partition, now_ms=0)
    trigger.snapshot(1, start + HOUR)  # not past 10:00 + 1 h
    trigger.snapshot(2, start + HOUR + 1)
    assert trigger.committable(1, now_ms=0) == []
    assert trigger.committable(2, now_ms=0) == ["dt=2020-05-01/hr=10"]
    assert trigger.end_input() == ["dt=2020-05-01/hr=11"]


def test_trigger_state_survives_a_snapshot_and_restore():
    trigger = PartitionTimeCommitTrigger(0, "UTC", DefaultPartTimeExtractor())
    trigger.add_partition("dt=2020-05-01", now_ms=0)
    state = trigger.snapshot(4, 0)
    restored = PartitionTimeCommitTrigger(0, "UTC", DefaultPartTimeExtractor())
    restored.restore(state)
    restored.snapshot(5, epoch_millis(datetime.datetime(2020, 5, 1), "UTC") + 1)
    assert restored.committable(5, now_ms=0) == ["dt=2020-05-01"]


# -- the committer -------------------------------------------------------------------------------

def test_committer_commits_once_every_writer_reported(tmp_path):
    base = tmp_path / "t"
    committer = PartitionCommitter(CommitterSettings(
        str(base), ("cat", "db", "t"), ("dt",), _settings(**{
            "sink.partition-commit.policy.kind": "success-file"})), ManualClock())
    committer.write([PartitionCommitInfo(1, 0, 2, ("dt=a",))])
    assert not (base / "dt=a" / "_SUCCESS").exists()  # subtask 1 has not reported
    committer.write([PartitionCommitInfo(1, 1, 2, ("dt=b",))])
    assert (base / "dt=a" / "_SUCCESS").exists() and (base / "dt=b" / "_SUCCESS").exists()


def test_writers_ending_at_different_checkpoints(tmp_path):
    """Subtask 0's input ends at checkpoint 1 (it reports no later checkpoint); checkpoint 2
    is complete with subtask 1's info, and only subtask 1's end commits what the trigger held
    back. The ended writers survive a restore of the committer."""
    base = tmp_path / "t"
    committer = PartitionCommitter(CommitterSettings(str(base), ("t",), ("dt",), _settings(**{
        "sink.partition-commit.policy.kind": "success-file",
        "sink.partition-commit.delay": "1 h"})), ManualClock())
    committer.write([PartitionCommitInfo(1, 0, 2, ("dt=a",), True),
                     PartitionCommitInfo(1, 1, 2, ())])
    assert not (base / "dt=a").exists()  # not all writers ended: the delay holds it
    restored = PartitionCommitter(committer.settings, ManualClock())
    restored.restore(committer.snapshot_state(2))
    restored.write([PartitionCommitInfo(3, 1, 2, ("dt=b",))])
    assert not (base / "dt=b").exists()
    restored.write([PartitionCommitInfo(4, 1, 2, (), True)])
    assert (base / "dt=a" / "_SUCCESS").exists() and (base / "dt=b" / "_SUCCESS").exists()


def test_committer_with_partition_time_commits_what_the_watermark_passed(tmp_path):
    base = tmp_path / "t"
    committer = PartitionCommitter(CommitterSettings(str(base), ("t",), ("dt",), _settings(**{
        "sink.partition-commit.policy.kind": "success-file",
        "sink.partition-commit.trigger": "partition-time"})), ManualClock())
    day = epoch_millis(datetime.datetime(2020, 5, 1), "UTC")
    committer.process_watermark(day)
    committer.snapshot_state(1)
    committer.write([PartitionCommitInfo(1, 0, 1, ("dt=2020-05-01",))])
    assert not (base / "dt=2020-05-01" / "_SUCCESS").exists()  # watermark == partition time
    state = committer.snapshot_state(2)  # the partition is pending in it
    again = PartitionCommitter(committer.settings, ManualClock())  # restored elsewhere
    again.restore(state)
    again.process_watermark(day + 1)
    again.snapshot_state(3)
    again.write([PartitionCommitInfo(3, 0, 1, ())])
    assert (base / "dt=2020-05-01" / "_SUCCESS").exists()


def test_end_of_input_commits_every_pending_partition(tmp_path):
    log = tmp_path / "log"
    committer = PartitionCommitter(CommitterSettings(str(tmp_path), ("t",), ("dt",), _settings(**{
        "sink.partition-commit.policy.kind": "custom",
        "sink.partition-commit.policy.class": f"{__name__}.RecordingPolicy",
        "sink.partition-commit.policy.class.parameters": f"{log};end",
        "sink.partition-commit.trigger": "partition-time"})), ManualClock())
    committer.write([PartitionCommitInfo(END_INPUT, 0, 1, ("dt=2999-01-01",), True)])
    assert log.read_text() == "end t {'dt': '2999-01-01'} dt=2999-01-01\n"


def test_option_errors():
    with pytest.raises(PartitionCommitPolicyError, match="'metastore' partition commit policy"):
        _settings(**{"sink.partition-commit.policy.kind": "metastore,success-file"})
    with pytest.raises(PartitionCommitPolicyError, match="Unsupported partition commit policy"):
        _settings(**{"sink.partition-commit.policy.kind": "hive"})
    with pytest.raises(PartitionCommitPolicyError, match="class' must be set"):
        _settings(**{"sink.partition-commit.policy.kind": "custom"})
    with pytest.raises(PartitionCommitPolicyError, match="Could not load class"):
        _settings(**{"sink.partition-commit.policy.kind": "custom",
                     "sink.partition-commit.policy.class": "no.such.Policy"})
    with pytest.raises(ValidationError, match="watermark time zone"):
        _settings(**{"sink.partition-commit.watermark-time-zone": "Mars/Olympus"})
    with pytest.raises(ValidationError, match="Expected one of"):
        _settings(**{"sink.partition-commit.trigger": "wall-time"})
    assert not _settings().enabled


# -- jobs on thread TaskManagers -----------------------------------------------------------------

@pytest.fixture
def executor(monkeypatch):
    return use_thread_executor(monkeypatch)


def _listing(path):
    found = []
    for root, _, names in os.walk(path):
        found.extend(UUID.sub("<uuid>", os.path.relpath(os.path.join(root, n), path))
                     for n in names if not n.startswith("."))
    return sorted(found)


def _env(streaming, parallelism=2):
    settings = (EnvironmentSettings.in_streaming_mode() if streaming
                else EnvironmentSettings.in_batch_mode())
    env = TableEnvironment.create(settings)
    env.get_config().set("parallelism.default", str(parallelism))
    if streaming:
        env.get_config().set("execution.checkpointing.interval", "100 ms")
    return env


ROWS = ("(1, 'a', '2020-05-01', 10), (2, 'b', '2020-05-01', 11), (3, 'c', '2020-05-02', 10), "
        "(4, 'd', '2020-05-01', 10), (5, 'e', CAST(NULL AS STRING), 1)")


@pytest.mark.parametrize("streaming", [False, True], ids=["batch", "streaming"])
def test_success_files_after_every_subtasks_files(executor, tmp_path, streaming):
    env = _env(streaming)
    path = tmp_path / "logs"
    env.execute_sql(f"""
        CREATE TABLE logs (id INT, msg STRING, dt STRING, hr INT) PARTITIONED BY (dt, hr)
        WITH ('connector' = 'filesystem', 'path' = '{path}', 'format' = 'csv',
              'sink.partition-commit.policy.kind' = 'success-file')""")
    env.execute_sql(f"INSERT INTO logs SELECT * FROM (VALUES {ROWS}) AS v(a, b, c, d)").wait()
    listing = _listing(path)
    partitions = {"dt=2020-05-01/hr=10", "dt=2020-05-01/hr=11", "dt=2020-05-02/hr=10",
                  "dt=__DEFAULT_PARTITION__/hr=1"}
    assert {os.path.dirname(f) for f in listing} == partitions
    assert {f for f in listing if f.endswith("_SUCCESS")} == {p + "/_SUCCESS" for p in partitions}
    name = r"part-<uuid>-\d-\d" if streaming else r"part-<uuid>-task-\d-file-\d"
    assert all(re.fullmatch(name, os.path.basename(f)) for f in listing if "part-" in f)
    rows = sorted(str(r) for r in env.execute_sql(
        "SELECT id, dt, hr FROM logs WHERE hr = 10").collect())
    assert rows == ["<Row(1, '2020-05-01', 10)>", "<Row(3, '2020-05-02', 10)>",
                    "<Row(4, '2020-05-01', 10)>"]


def test_custom_policy_and_success_file_name(executor, tmp_path):
    env = _env(True)
    log = tmp_path / "committed.log"
    env.execute_sql(f"""
        CREATE TABLE t (v INT, k STRING) PARTITIONED BY (k)
        WITH ('connector' = 'filesystem', 'path' = '{tmp_path / "t"}', 'format' = 'json',
              'sink.partition-commit.policy.kind' = 'success-file,custom',
              'sink.partition-commit.policy.class' = '{__name__}.RecordingPolicy',
              'sink.partition-commit.policy.class.parameters' = '{log}',
              'sink.partition-commit.success-file.name' = '_DONE')""")
    env.execute_sql("INSERT INTO t VALUES (1, 'x'), (2, 'y'), (3, 'x')").wait()
    assert sorted(log.read_text().splitlines()) == [
        "custom t {'k': 'x'} k=x", "custom t {'k': 'y'} k=y"]
    assert [f for f in _listing(tmp_path / "t") if not f.split("/")[1].startswith("part")] == [
        "k=x/_DONE", "k=y/_DONE"]


def test_without_a_policy_no_committer_runs(executor, tmp_path):
    env = _env(False, parallelism=1)
    env.execute_sql(f"""
        CREATE TABLE t (v INT, k STRING) PARTITIONED BY (k)
        WITH ('connector' = 'filesystem', 'path' = '{tmp_path / "t"}', 'format' = 'csv')""")
    env.execute_sql("INSERT INTO t VALUES (1, 'x')").wait()
    assert _listing(tmp_path / "t") == ["k=x/part-<uuid>-task-0-file-0"]


def test_where_on_partition_columns_reads_only_matching_partitions(executor, tmp_path):
    """Files of partitions the WHERE rules out are not read: theirs do not parse, and the
    query still succeeds."""
    for directory, line in (("dt=a/hr=1", "1"), ("dt=a/hr=2", "oops"), ("dt=b/hr=1", "oops"),
                            ("dt=a/hr=3", "3")):
        os.makedirs(tmp_path / "t" / directory)
        (tmp_path / "t" / directory / "part-0").write_text(line + "\n")
    env = _env(False, parallelism=1)  # batch: no restarts after the failure below
    env.execute_sql(f"""
        CREATE TABLE t (v INT, dt STRING, hr INT) PARTITIONED BY (dt, hr)
        WITH ('connector' = 'filesystem', 'path' = '{tmp_path / "t"}', 'format' = 'csv')""")
    rows = sorted(tuple(r) for r in env.execute_sql(
        "SELECT v, hr FROM t WHERE dt = 'a' AND hr <> 2 AND v > 0").collect())
    assert rows == [(1, 1), (3, 3)]
    none = list(env.execute_sql("SELECT v FROM t WHERE dt = 'c'").collect())
    assert none == []
    with pytest.raises(Exception, match="oops"):  # without a partition filter every file is read
        list(env.execute_sql("SELECT v FROM t WHERE v > 0").collect())


def test_partition_predicate_uses_the_conjuncts_over_partition_columns_only():
    from flintlock.table import types as t
    from flintlock.table.connectors.filesystem_partitions import partition_predicate
    from flintlock.table.plan.rex import Call, InputRef, Literal

    v, dt = InputRef(t.IntType(), 0), InputRef(t.VarCharType(2147483647), 1)
    on_dt = Call(t.BooleanType(), "=", (dt, Literal(t.VarCharType(1, False), "a")))
    on_v = Call(t.BooleanType(), ">", (v, Literal(t.IntType(False), 0)))
    keep = partition_predicate(Call(t.BooleanType(), "AND", (on_v, on_dt)), [1], 2)
    assert keep(["a"]) and not keep(["b"]) and not keep([None])
    assert partition_predicate(on_v, [1], 2) is None
    assert partition_predicate(Call(t.BooleanType(), "OR", (on_v, on_dt)), [1], 2) is None


def test_a_failure_after_a_partition_commit_restores_the_committer(executor, tmp_path):
    """A streaming job whose UDF fails once after a partition was committed: after the
    restore every row is in its partition exactly once and every partition has its
    ``_SUCCESS`` (the writers' and the committer's state came back from the checkpoint)."""
    from flintlock.table import DataTypes
    from flintlock.table.udf import udf
    from flintlock.testing.faults import RaiseOnceAfter
    from flintlock.testing.files import committed_lines

    env = _env(True)
    for key, value in {"execution.checkpointing.interval": "50 ms",
                       "execution.checkpointing.dir": str(tmp_path / "chk"),
                       "restart-strategy.type": "fixed-delay",
                       "restart-strategy.fixed-delay.delay": "50 ms",
                       "restart-strategy.fixed-delay.attempts": "3"}.items():
        env.get_config().set(key, value)
    out, marker = tmp_path / "out", tmp_path / "failed"
    fail_once = udf(RaiseOnceAfter(marker, str(out / "*" / "_SUCCESS"), every=10,
                                   delay_s=0.01), result_type=DataTypes.BIGINT())
    env.create_temporary_function("fail_once", fail_once)
    env.execute_sql("CREATE TABLE g (id BIGINT) WITH ('connector' = 'datagen', "
                    "'fields.id.kind' = 'sequence', 'fields.id.start' = '1', "
                    "'fields.id.end' = '3000')")
    env.execute_sql(f"""
        CREATE TABLE t (id BIGINT, k STRING) PARTITIONED BY (k)
        WITH ('connector' = 'filesystem', 'path' = '{out}', 'format' = 'csv',
              'sink.partition-commit.policy.kind' = 'success-file')""")
    env.execute_sql("INSERT INTO t SELECT fail_once(id), CAST(id % 3 AS STRING) FROM g").wait()
    assert marker.exists(), "the failure was never injected"
    assert len(executor.launchers[-1].attempts) >= 2
    assert sorted(int(line) for line in committed_lines(out) if line) == list(range(1, 3001))
    assert sorted(f for f in _listing(out) if f.endswith("_SUCCESS")) == [
        "k=0/_SUCCESS", "k=1/_SUCCESS", "k=2/_SUCCESS"]


def test_partition_values_are_written_as_flinks_internal_values():
    from decimal import Decimal

    from flintlock.table.connectors.filesystem_sink import escape_partition, partition_text

    assert partition_text(True) == "true"
    assert partition_text(datetime.date(2024, 2, 28)) == "19781"  # the epoch day, as Flink
    assert partition_text(datetime.date(1969, 12, 31)) == "-1"
    assert partition_text(datetime.datetime(2020, 5, 1, 10)) == "2020-05-01T10:00"
    assert partition_text(datetime.datetime(2020, 5, 1, 10, 0, 1, 250000)) == (
        "2020-05-01T10:00:01.250")
    assert partition_text(1e20) == "1.0E20" and partition_text(0.5) == "0.5"
    assert partition_text(Decimal("2.00")) == "2.00"
    assert escape_partition("a/b=c d:e") == "a%2Fb%3Dc d%3Ae"


def test_partition_time_commits_a_partition_once_the_watermark_passed_it(monkeypatch, tmp_path):
    """Rows of 10:01..11:00 with a watermark 1 s behind: while the source holds (at a gate),
    the partition of hour 10 is committed and that of hour 11 is not — its time plus the
    delay is ahead of the watermark; the end of the input commits it."""
    from flintlock.common.watermark_strategy import WatermarkStrategy
    from flintlock.datastream import StreamExecutionEnvironment
    from flintlock.table import DataTypes, Schema, StreamTableEnvironment
    from flintlock.testing.gates import FileGate, GatedNumberSequenceSource, open_when

    use_thread_executor(monkeypatch)
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(1)
    env.enable_checkpointing(50)
    t_env = StreamTableEnvironment.create(env)
    gate, out = FileGate(tmp_path / "gate"), tmp_path / "out"
    numbers = env.from_source(GatedNumberSequenceSource(1, 61, gate, before_gate=60),
                              WatermarkStrategy.no_watermarks(), "minutes")
    t_env.create_temporary_view("clicks", t_env.from_data_stream(numbers, Schema.new_builder()
        .column("f0", DataTypes.BIGINT())
        .column_by_expression(
            "ts", "TIMESTAMPADD(MINUTE, CAST(f0 AS INT), TIMESTAMP '2020-05-01 10:00:00')")
        .watermark("ts", "ts - INTERVAL '1' SECOND").build()))
    t_env.execute_sql(f"""
        CREATE TABLE t (id BIGINT, dt STRING, hr INT) PARTITIONED BY (dt, hr)
        WITH ('connector' = 'filesystem', 'path' = '{out}', 'format' = 'csv',
              'sink.partition-commit.trigger' = 'partition-time',
              'partition.time-extractor.timestamp-pattern' = '$dt $hr:00:00',
              'sink.partition-commit.policy.kind' = 'success-file')""")
    hour_10, hour_11 = out / "dt=2020-05-01" / "hr=10", out / "dt=2020-05-01" / "hr=11"
    seen: list[bool] = []

    def hour_10_committed() -> bool:
        if (hour_10 / "_SUCCESS").exists():
            seen.append((hour_11 / "_SUCCESS").exists())  # the source still holds
            return True
        return False

    opener = open_when(gate, hour_10_committed)
    t_env.execute_sql("INSERT INTO t SELECT f0, DATE_FORMAT(ts, 'yyyy-MM-dd'), HOUR(ts) "
                      "FROM clicks WHERE f0 <= 60").wait()
    opener.join(60)
    assert seen == [False]
    assert (hour_11 / "_SUCCESS").exists()  # committed at the end of the input
    assert len(committed_rows(out)) == 60


def committed_rows(path):
    from flintlock.testing.files import committed_lines

    return [line for line in committed_lines(path) if line]


@pytest.mark.parametrize("streaming", [False, True], ids=["batch", "streaming"])
def test_a_table_without_partitions_gets_its_success_file_in_batch_mode(executor, tmp_path,
                                                                          streaming):
    """As PyFlink 2.3.0: the batch sink commits the table's directory (``_SUCCESS`` at its
    root); the streaming sink has no committer without partitions."""
    env = _env(streaming, parallelism=1)
    env.execute_sql(f"""
        CREATE TABLE t (v INT, k STRING)
        WITH ('connector' = 'filesystem', 'path' = '{tmp_path / "t"}', 'format' = 'csv',
              'sink.partition-commit.policy.kind' = 'success-file')""")
    env.execute_sql("INSERT INTO t VALUES (1, 'x'), (2, 'y')").wait()
    names = [f for f in _listing(tmp_path / "t") if not f.startswith("part-")]
    assert names == ([] if streaming else ["_SUCCESS"])
