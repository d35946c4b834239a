"""Operator-level numRecordsIn / numRecordsOut (runtime/tasks/operator_io.py): counted per
batch on the chained edges, read from the record writers, reported with their rates."""

from flintlock.runtime.metrics import SubtaskMetricGroups, SubtaskMetrics, TaskIOCounters
from flintlock.runtime.tasks.operator_io import CountingChainedOutput, OperatorRecordCounts


class Operator:
    def __init__(self):
        self.batches = []
        self.watermarks = []

    def process_batch(self, records):
        self.batches.append(records)

    def process_watermark(self, timestamp):
        self.watermarks.append(timestamp)

    def process_watermark_status(self, idle):
        pass


class Writer:
    def __init__(self, records):
        self.records = records

    def io_counts(self):
        return self.records, 10 * self.records


def _values(groups):
    return {f"{r.scope.identifier(r.name)}": r.metric.get_value()
            for r in groups.registry.registered() if r.scope.components}


def test_a_chained_edge_counts_batches_and_passes_them_on():
    target = Operator()
    edge = CountingChainedOutput(target)
    edge.collect_batch([1, 2, 3])
    edge.collect_batch([4])
    edge.emit_watermark(7)
    assert target.batches == [[1, 2, 3], [4]] and target.watermarks == [7]
    assert edge.records == 4


def test_counts_of_a_chain_head_map_side_output_and_writers():
    # head (node 1) -> map (node 2) chained; map -> writer; map's side output "late" -> writer
    # and a chained sink (node 3); head also writes to a second writer on its main output
    groups = SubtaskMetricGroups()
    records_in = groups.task.counter("numRecordsIn")
    counts = OperatorRecordCounts()
    into_map = counts.chained(1, None, Operator(), 2)
    counts.written(1, None, Writer(5))  # same tag as the chained edge: counted once
    counts.written(2, None, Writer(6))
    into_sink = counts.chained(2, "late", Operator(), 3)
    counts.written(2, "late", Writer(2))  # that tag is counted by its chained edge
    counts.register(groups, [(1, "h", "Head"), (2, "m", "Map"), (3, "s", "Sink")], records_in,
                    source_head=False)
    records_in.inc(5)
    into_map.collect_batch([1, 2, 3, 4, 5])
    into_sink.collect_batch(["late"])
    assert _values(groups) == {
        "Head.numRecordsIn": 5, "Head.numRecordsOut": 5,
        "Map.numRecordsIn": 5, "Map.numRecordsOut": 6 + 1,
        "Sink.numRecordsIn": 1, "Sink.numRecordsOut": 0,
    }


def test_a_source_head_counts_what_it_emitted_as_its_input():
    groups = SubtaskMetricGroups()
    counts = OperatorRecordCounts()
    counts.written(1, None, Writer(42))
    counts.register(groups, [(1, "src", "Source")], groups.task.counter("numRecordsIn"),
                    source_head=True)
    assert _values(groups) == {"Source.numRecordsIn": 42, "Source.numRecordsOut": 42}


def test_the_report_adds_each_operator_count_rate():
    groups = SubtaskMetricGroups()
    counts = OperatorRecordCounts()
    edge = counts.chained(1, None, Operator(), 2)
    counts.register(groups, [(1, "h", "Head"), (2, "m", "Map")],
                    groups.task.counter("numRecordsIn"), source_head=False)
    metrics = SubtaskMetrics(groups.registry, (), start_s=0.0)
    edge.collect_batch(list(range(300)))
    report = metrics.sample(TaskIOCounters(0, 0, 0, 0, 0.0, 0.0), None, now_s=10.0, wall_ms=0)
    assert report.value("Map.numRecordsIn") == 300
    assert report.value("Map.numRecordsInPerSecond") == 30.0
    assert report.value("Head.numRecordsOutPerSecond") == 30.0
    assert report.value("Map.numRecordsOutPerSecond") == 0.0
