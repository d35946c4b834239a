"""User and system metrics of a running job, TaskManagers as threads: a function registers a
counter, a meter, a gauge and a distribution in ``open()`` with PyFlink's API (imports
changed from ``pyflink`` to ``flintlock`` only), and the JobManager's description carries
them per subtask, with Flink's task metrics, as the TaskManagers' heartbeats reported them.
Waits are bounded polls for a value, never timed assertions."""

import pytest

from flintlock.datastream import StreamExecutionEnvironment
from flintlock.datastream.functions import MapFunction, RuntimeContext
from flintlock.metrics import Counter, Distribution, Meter
from flintlock.testing.environments import local_configuration
from flintlock.testing.executor import use_thread_executor
from flintlock.testing.gates import FileGate, HoldAt
from flintlock.testing.waiting import wait_for

N = 2000


class CountingMap(MapFunction):
    """Ported from PyFlink: only the imports differ."""

    def open(self, runtime_context: RuntimeContext) -> None:
        group = runtime_context.get_metrics_group()
        self.seen: Counter = group.counter("seen")
        self.events: Meter = group.add_group("rates").meter("events", time_span_in_seconds=60)
        self.sizes: Distribution = group.add_group("parity", "even").distribution("values")
        self.last = 0
        group.gauge("last", lambda: self.last)

    def map(self, value):
        self.seen.inc()
        self.events.mark_event()
        if value % 2 == 0:
            self.sizes.update(value)
        self.last = value
        return value


@pytest.fixture
def client(monkeypatch, tmp_path):
    """The job, running: the last record waits at a gate until the test is over."""
    use_thread_executor(monkeypatch)
    gate = FileGate(tmp_path / "gate")
    config = local_configuration(tmp_path, options={
        "rest.port": "0", "heartbeat.interval": "50 ms"})
    env = StreamExecutionEnvironment.get_execution_environment(config)
    env.set_parallelism(1)
    env.from_collection(list(range(N))).rebalance().map(CountingMap()).name("Counting") \
        .map(HoldAt(gate, N - 1)).filter(lambda x: False).print()
    client = env.execute_async("metrics")
    yield client
    gate.open()
    assert client.join(60)


def _metrics_when(client, vertex_name, ready, bound_s=60.0):
    """The latest metrics report of subtask 0 of ``vertex_name`` once ``ready(report)``."""

    def described():
        return [(task.vertex_name, task.metrics) for task in client.jm.describe().tasks]

    def matching(tasks):
        return [metrics for name, metrics in tasks
                if vertex_name in name and metrics is not None and ready(metrics)]

    tasks = wait_for(described, matching, bound_s, f"no metrics of {vertex_name!r} as expected")
    return matching(tasks)[0]


def test_user_metrics_registered_in_open_reach_the_job_manager(client):
    report = _metrics_when(client, "Counting", lambda r: r.value("Counting.seen") == N)
    assert report.value("Counting.rates.events") > 0  # a rate, events per second
    assert report.value("Counting.last") == N - 1
    values = report.value("Counting.parity.even.values")
    assert (values.count, values.min, values.max) == (N // 2, 0, N - 2)
    variables = dict(report.variables)
    assert variables["job_name"] == "metrics" and variables["subtask_index"] == "0"
    (point,) = [p for p in report.points if p.identifier == "Counting.parity.even.values"]
    assert dict(point.scope.variables)["parity"] == "even"


def test_task_metrics_of_a_source_and_its_consumer(client):
    source = _metrics_when(client, "Source", lambda r: r.value("numRecordsOut") == N)
    assert source.value("numBytesOut") > 0
    assert source.value("numRecordsIn") == 0
    consumer = _metrics_when(client, "Counting", lambda r: r.value("numRecordsIn") == N)
    assert 0 < consumer.value("numBytesIn") <= source.value("numBytesOut")
    for name in ("busyTimeMsPerSecond", "backPressuredTimeMsPerSecond", "idleTimeMsPerSecond"):
        assert 0.0 <= consumer.value(name) <= 1000.0
    assert 0.0 <= consumer.value("inPoolUsage") <= 1.0
    assert 0.0 <= consumer.value("outPoolUsage") <= 1.0
    assert consumer.value("currentInputWatermark") is not None
    assert consumer.value("currentOutputWatermark") is not None


def test_a_finished_job_keeps_each_subtasks_final_counts(monkeypatch, tmp_path):
    """A job shorter than a heartbeat interval: every finished subtask still reports its last
    metrics (sent before its FINISHED state), so the JobManager has the final values."""
    use_thread_executor(monkeypatch)
    config = local_configuration(tmp_path, options={"heartbeat.interval": "1 h"})
    env = StreamExecutionEnvironment.get_execution_environment(config)
    env.set_parallelism(2)
    env.from_collection(list(range(N))).rebalance().map(CountingMap()).name("Counting") \
        .filter(lambda x: False).print()
    client = env.execute_async("finished")
    assert client.join(60)
    tasks = client.jm.describe().tasks
    counting = [t.metrics for t in tasks if "Counting" in t.vertex_name]
    assert len(counting) == 2 and all(m is not None for m in counting)
    assert sum(m.value("Counting.seen") for m in counting) == N
    assert sum(m.value("numRecordsIn") for m in counting) == N
    (source,) = [t.metrics for t in tasks if "Source" in t.vertex_name]
    assert source.value("numRecordsOut") == N


def _pending(report):
    """The source operator's pendingRecords in ``report`` (None if it has none)."""
    found = [p.value for p in report.points if p.name == "pendingRecords"]
    return found[0] if found else None


def test_sources_report_pending_records(monkeypatch, tmp_path):
    from flintlock.common import WatermarkStrategy
    from flintlock.datastream.connectors.number_seq import NumberSequenceSource

    use_thread_executor(monkeypatch)
    gate = FileGate(tmp_path / "gate")
    config = local_configuration(tmp_path, options={"heartbeat.interval": "50 ms"})
    env = StreamExecutionEnvironment.get_execution_environment(config)
    env.set_parallelism(1)
    env.from_source(NumberSequenceSource(0, 10**9), WatermarkStrategy.no_watermarks(),
                    "numbers").rebalance().map(HoldAt(gate, 0)).print()
    client = env.execute_async("pending")
    try:
        report = _metrics_when(client, "numbers", lambda r: (_pending(r) or 0) > 0)
        assert 10**9 - 10**7 < _pending(report) <= 10**9 + 1  # the downstream holds it back
    finally:
        gate.open()
        client.jm.cancel()
        assert client.join(60)

    env = StreamExecutionEnvironment.get_execution_environment(
        local_configuration(tmp_path, options={"heartbeat.interval": "1 h"}))
    env.from_collection(list(range(N))).print()
    finished = env.execute_async("collection")
    assert finished.join(60)
    (source,) = [t.metrics for t in finished.jm.describe().tasks]
    assert _pending(source) == 0 and source.value("numRecordsOut") == 0  # chained to print


def test_a_file_source_reports_the_bytes_it_has_left(monkeypatch, tmp_path):
    from flintlock.common import WatermarkStrategy
    from flintlock.datastream.connectors.file_system import FileSource, StreamFormat

    use_thread_executor(monkeypatch)
    gate = FileGate(tmp_path / "gate")
    data = tmp_path / "in" / "lines.txt"
    data.parent.mkdir()
    data.write_text("".join(f"line {i:09d}\n" for i in range(300_000)))  # 4.5 MB
    size = data.stat().st_size
    env = StreamExecutionEnvironment.get_execution_environment(
        local_configuration(tmp_path, options={"heartbeat.interval": "50 ms"}))
    env.set_parallelism(1)
    source = FileSource.for_record_stream_format(StreamFormat.text_line_format(),
                                                 str(data.parent)).build()
    env.from_source(source, WatermarkStrategy.no_watermarks(), "lines") \
        .rebalance().map(HoldAt(gate, "line 000000000")).print()
    client = env.execute_async("pending bytes")
    try:
        def pending_bytes(report):
            found = [p.value for p in report.points if p.name == "pendingBytes"]
            return found[0] if found else None

        # it reads some, then the map holds the rest back
        report = _metrics_when(client, "lines",
                               lambda r: 0 < (pending_bytes(r) or 0) < size)
        assert pending_bytes(report) % len("line 000000000\n") == 0  # whole lines read
        assert _pending(report) is None  # a text file's lines are not known before reading
    finally:
        gate.open()
        client.jm.cancel()
        assert client.join(60)


PYFLINK_PROGRAM = '''
from pyflink.datastream import StreamExecutionEnvironment
from pyflink.datastream.functions import MapFunction, RuntimeContext


class Tagged(MapFunction):
    def open(self, runtime_context: RuntimeContext):
        group = runtime_context.get_metrics_group()
        self.records = group.counter("records")
        self.rate = group.meter("rate", time_span_in_seconds=30)
        self.sizes = group.distribution("sizes")
        self.hits = group.add_group("tenant", "acme").counter("hits")
        self.last = 0
        group.gauge("last", lambda: self.last)

    def map(self, value):
        self.records.inc()
        self.rate.mark_event()
        self.sizes.update(value)
        self.hits.inc(2)
        self.last = value
        return value * 10


env = StreamExecutionEnvironment.get_execution_environment()
env.set_parallelism(1)
env.from_collection([1, 2, 3]).map(Tagged()).print()
env.execute("ported metrics")
'''


def test_a_pyflink_program_registering_metrics_in_open_runs_ported_by_its_imports(
        monkeypatch, tmp_path, capsys):
    """PyFlink source text, rewritten by the parity harness's ``port_source`` (imports only),
    runs as ``python program.py`` would."""
    import tempfile

    from tests.parity.harness import port_source

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    use_thread_executor(monkeypatch)
    ported = port_source(PYFLINK_PROGRAM, "ported_metrics.py")
    assert "from flintlock.datastream.functions import" in ported
    exec(compile(ported, "ported_metrics.py", "exec"), {"__name__": "__main__"})
    assert capsys.readouterr().out.split() == ["10", "20", "30"]
