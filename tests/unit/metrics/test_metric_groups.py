"""Metric types, groups and scopes, and the per-heartbeat report, without a task: counters and
meters driven by hand, the clock an argument (no sleeps)."""

import math
import pickle

import pytest

from flintlock.metrics import Counter, Distribution, Meter, MetricGroup
from flintlock.runtime.metrics import (
    MeterView,
    MetricKind,
    MetricNameClashError,
    SubtaskMetricGroups,
    SubtaskMetrics,
    TaskIOCounters,
    TaskTimeSplit,
)

TASK_VARIABLES = {"host": "h1", "tm_id": "tm-0", "job_id": "j1", "job_name": "word count",
                  "task_name": "Map", "subtask_index": "1"}


def _groups() -> SubtaskMetricGroups:
    return SubtaskMetricGroups(task_variables=TASK_VARIABLES)


def _io(records_in=0, records_out=0, bytes_in=0, bytes_out=0) -> TaskIOCounters:
    return TaskIOCounters(records_in, records_out, bytes_in, bytes_out, 0.25, 0.5)


def test_counter_meter_distribution_follow_pyflink_names():
    group = _groups().operator("op1", "Map")
    assert isinstance(group, MetricGroup)
    counter = group.counter("seen")
    counter.inc()
    counter.inc(5)
    counter.dec(2)
    assert isinstance(counter, Counter) and counter.get_count() == 4
    meter = group.meter("events", time_span_in_seconds=10)
    meter.mark_event()
    meter.mark_event(3)
    assert isinstance(meter, Meter) and meter.get_count() == 4 and meter.get_rate() == 0.0
    distribution = group.distribution("sizes")
    for value in (3, 1, 8):
        distribution.update(value)
    assert isinstance(distribution, Distribution)
    value = distribution.get_value()
    assert (value.count, value.sum, value.min, value.max) == (3, 12.0, 1, 8)
    assert value.mean == 4.0


def test_an_empty_distribution_has_no_min_or_max():
    value = _groups().operator("op1", "Map").distribution("d").get_value()
    assert value.count == 0 and math.isnan(value.min) and math.isnan(value.max)


def test_scopes_nested_and_key_value_groups():
    group = _groups().operator("op1", "Map")
    nested = group.add_group("io").add_group("errors")
    assert nested.scope.components == ("Map", "io", "errors")
    assert nested.scope.logical == ("operator", "io", "errors")
    keyed = group.add_group("user", "alice")
    assert keyed.scope.components == ("Map", "user", "alice")
    assert keyed.scope.logical == ("operator", "user")
    assert dict(keyed.scope.variables) == {
        "operator_id": "op1", "operator_name": "Map", "user": "alice"}
    assert keyed.get_all_variables()["<user>"] == "alice"
    assert keyed.get_all_variables()["<job_name>"] == "word count"
    assert keyed.get_metric_identifier("n") == "h1.taskmanager.tm-0.word count.Map.user.alice.n"
    assert group.add_group("user", "alice") is keyed


def test_registering_a_name_twice_returns_the_same_metric_or_refuses_another_kind():
    groups = _groups()
    first = groups.operator("op1", "Map").counter("n")
    again = groups.operator("op1", "Map").counter("n")
    assert again is first
    other_operator = groups.operator("op2", "Filter").counter("n")
    assert other_operator is not first
    with pytest.raises(MetricNameClashError, match=r"Map\.n"):
        groups.operator("op1", "Map").meter("n")


def test_meter_view_rate_over_its_span():
    view = MeterView(10)
    assert view.sample(0, 0.0) == 0.0
    assert view.sample(50, 5.0) == 10.0
    assert view.sample(100, 10.0) == 10.0
    # the samples older than the span are dropped: only (10 s, 100) and (20 s, 400) remain
    assert view.sample(400, 20.0) == 30.0


def test_report_has_system_metrics_and_user_metrics_by_flink_id():
    groups = _groups()
    metrics = SubtaskMetrics(groups.registry, tuple(TASK_VARIABLES.items()), 0.0)
    group = groups.operator("op1", "Map")
    counter = group.counter("seen")
    group.gauge("queue", lambda: 7)
    meter = group.add_group("k", "v").meter("m", 60)
    counter.inc(3)
    meter.mark_event(10)
    first = metrics.sample(_io(records_in=100, records_out=40), TaskTimeSplit(700, 200, 100),
                           now_s=1.0, wall_ms=1000)
    meter.mark_event(20)
    second = metrics.sample(_io(records_in=300, records_out=90, bytes_out=4096), None,
                            now_s=3.0, wall_ms=3000)
    assert first.value("numRecordsIn") == 100 and first.value("numRecordsOut") == 40
    assert first.value("busyTimeMsPerSecond") == 700
    assert first.value("backPressuredTimeMsPerSecond") == 200
    assert first.value("idleTimeMsPerSecond") == 100
    assert first.value("inPoolUsage") == 0.25 and first.value("outPoolUsage") == 0.5
    assert first.value("Map.seen") == 3 and first.value("Map.queue") == 7.0
    # rates count from the subtask's start (0 s) while it is younger than the span (60 s)
    assert first.value("numRecordsInPerSecond") == 100.0  # 100 in 1 s
    assert second.value("numRecordsInPerSecond") == 100.0  # 300 in 3 s
    assert second.value("numRecordsOutPerSecond") == 30.0
    assert second.value("numBytesOut") == 4096
    assert first.value("Map.k.v.m") == 10.0  # 10 events in 1 s
    assert second.value("Map.k.v.m") == 10.0  # 30 events in 3 s
    assert second.value("busyTimeMsPerSecond") is None  # no time split this time
    kinds = {p.identifier: p.kind for p in second.points}
    assert kinds["Map.seen"] is MetricKind.COUNTER and kinds["Map.k.v.m"] is MetricKind.METER
    assert pickle.loads(pickle.dumps(second)) == second


def test_the_records_in_counter_is_reported_once_as_a_system_metric():
    groups = _groups()
    metrics = SubtaskMetrics(groups.registry, (), 0.0)
    groups.task.counter("numRecordsIn").inc(5)
    report = metrics.sample(_io(records_in=5), None, now_s=0.0, wall_ms=0)
    assert [p.identifier for p in report.points].count("numRecordsIn") == 1


def test_a_failing_gauge_is_skipped_and_the_rest_reported(caplog):
    groups = _groups()
    metrics = SubtaskMetrics(groups.registry, (), 0.0)
    group = groups.operator("op1", "Map")
    group.gauge("broken", lambda: 1 / 0)
    group.gauge("text", lambda: "seven")
    group.counter("ok").inc()
    report = metrics.sample(_io(), None, now_s=0.0, wall_ms=0)
    assert report.value("Map.broken") is None and report.value("Map.text") is None
    assert report.value("Map.ok") == 1
    metrics.sample(_io(), None, now_s=1.0, wall_ms=1)
    assert sum("cannot be read" in r.message for r in caplog.records) == 2  # once per gauge


def test_metric_names_must_be_non_empty_strings():
    group = _groups().operator("op1", "Map")
    with pytest.raises(ValueError):
        group.counter("")
    with pytest.raises(ValueError):
        group.meter("m", time_span_in_seconds=0)
