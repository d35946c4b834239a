"""SplitWatermarks: per-split watermark generation combined by minimum, with idleness,
driven by event lists and a manual clock; the laws (never decreasing; a new watermark is the
slowest known split's) checked with hypothesis."""

from hypothesis import given
from hypothesis import strategies as st

from flintlock.common import Duration, WatermarkStrategy
from flintlock.runtime.tasks.split_watermarks import SplitWatermarks


class Recorder:
    def __init__(self):
        self.events = []

    def emit_watermark(self, timestamp):
        self.events.append(("watermark", timestamp))

    def emit_watermark_status(self, idle):
        self.events.append(("idle", idle))


class Clock:
    def __init__(self):
        self.now = 0

    def __call__(self):
        return self.now


def _make(strategy=None):
    out, clock = Recorder(), Clock()
    strategy = strategy or WatermarkStrategy.for_monotonous_timestamps()
    return SplitWatermarks(strategy, out, clock), out, clock


def test_the_watermark_is_the_minimum_over_the_splits():
    splits, out, _ = _make()
    splits.add_split("a")
    splits.add_split("b")
    splits.on_timestamps(["a", "a"], [100, 200])
    splits.on_periodic_emit()
    assert out.events == []  # b has produced nothing: it holds the watermark back
    splits.on_timestamps(["b"], [150])
    splits.on_periodic_emit()
    assert out.events == [("watermark", 149)]
    splits.on_timestamps(["b"], [300])
    splits.on_periodic_emit()
    assert out.events == [("watermark", 149), ("watermark", 199)]


def test_an_idle_split_stops_holding_back_and_all_idle_is_idle():
    splits, out, clock = _make(WatermarkStrategy.for_monotonous_timestamps()
                               .with_idleness(Duration.of_millis(50)))
    splits.add_split("a")
    splits.add_split("b")
    splits.on_timestamps(["a"], [1000])
    clock.now = 40
    splits.on_timestamps(["a"], [1001])
    clock.now = 60  # b silent for 60 ms: idle; a active (last record at 40)
    splits.on_periodic_emit()
    assert out.events == [("watermark", 1000)]
    clock.now = 100  # a silent for 60 ms too
    splits.on_periodic_emit()
    assert out.events[-1] == ("idle", True)
    splits.on_timestamps(["b"], [500])
    assert out.events[-1] == ("idle", False)
    splits.on_periodic_emit()
    assert out.events[-1] == ("idle", False)  # b's 499 is below what was emitted: no regress


def test_a_finished_split_no_longer_holds_back():
    splits, out, _ = _make()
    splits.on_timestamps(["a", "b"], [10, 500])
    splits.on_periodic_emit()
    assert out.events == [("watermark", 9)]
    splits.remove_split("a")
    assert out.events == [("watermark", 9), ("watermark", 499)]


def test_a_source_without_splits_is_idle_until_its_first_record():
    splits, out, _ = _make()
    splits.on_periodic_emit()
    assert out.events == [("idle", True)]
    splits.add_split("a")
    splits.on_timestamps(["a"], [40])
    splits.on_periodic_emit()
    assert out.events == [("idle", True), ("idle", False), ("watermark", 39)]


def test_end_emits_the_final_watermark_once():
    splits, out, _ = _make()
    splits.on_timestamps(["a"], [10])
    splits.end(2**63 - 1)
    splits.on_timestamps(["a"], [20])
    splits.on_periodic_emit()
    splits.end(2**63 - 1)
    assert out.events == [("watermark", 2**63 - 1)]


RECORDS = st.tuples(st.just("records"), st.lists(
    st.tuples(st.sampled_from("abc"), st.integers(0, 10_000)), min_size=1))
TICK = st.tuples(st.just("tick"), st.integers(0, 100))
REMOVE = st.tuples(st.just("remove"), st.sampled_from("abc"))


def _run(events):
    splits, out, clock = _make()
    for kind, arg in events:
        if kind == "records":
            splits.on_timestamps([s for s, _ in arg], [t for _, t in arg])
        elif kind == "tick":
            clock.now += arg
            splits.on_periodic_emit()
        else:
            splits.remove_split(arg)
        yield [t for k, t in out.events if k == "watermark"]


@given(st.lists(st.one_of(RECORDS, TICK, REMOVE)))
def test_the_watermark_never_decreases(events):
    for emitted in _run(events):
        assert emitted == sorted(set(emitted))


@given(st.lists(st.one_of(RECORDS, TICK)))
def test_a_new_watermark_is_the_slowest_split_s(events):
    largest, before = {}, 0
    for (kind, arg), emitted in zip(events, _run(events), strict=True):
        if kind == "records":
            for split, t in arg:
                largest[split] = max(largest.get(split, -1), t)
        if len(emitted) > before:  # only a periodic emission emits, from every known split
            assert kind == "tick"
            assert emitted[-1] == min(largest.values()) - 1
        before = len(emitted)


def test_a_watermark_expression_is_computed_per_split_from_its_own_records():
    """A SQL table's WATERMARK pushed into the source: each record's expression value counts
    for its own split, and the source's watermark is the minimum over the splits."""
    strategy = WatermarkStrategy.for_watermark_expression(lambda row: row[1] - 1000)
    splits, out, _ = _make(strategy)
    splits.add_split("a")
    splits.add_split("b")
    splits.on_values(["a", "a"], [("x", 50_000), ("x", 60_000)])
    assert out.events == []  # b has produced nothing: it holds the watermark back
    splits.on_values(["b"], [("y", 5_000)])
    assert out.events == [("watermark", 4_000)]  # b's, not a's 59 000
    splits.on_values(["b", "a"], [("y", 70_000), ("x", 80_000)])
    assert out.events[-1] == ("watermark", 69_000)
