from flintlock.runtime.tasks.time_meter import TaskTimeMeter
from flintlock.testing.clock import ManualClock


def test_busy_backpressured_and_idle_add_up_to_a_second_per_second():
    clock = ManualClock()
    pressure = [0.0]
    meter = TaskTimeMeter(lambda: pressure[0], clock)
    clock.advance(1000)
    meter.add_idle(250)
    pressure[0] += 100
    stats = meter.sample()
    assert (stats.idle_ms_per_s, stats.backpressured_ms_per_s, stats.busy_ms_per_s) == (
        250.0, 100.0, 650.0)


def test_each_sample_covers_only_the_time_since_the_previous_one():
    clock = ManualClock()
    pressure = [40.0]
    meter = TaskTimeMeter(lambda: pressure[0], clock)
    clock.advance(500)
    meter.add_idle(500)
    assert meter.sample().idle_ms_per_s == 1000.0
    clock.advance(2000)
    pressure[0] += 2000
    stats = meter.sample()
    assert stats.idle_ms_per_s == 0.0 and stats.backpressured_ms_per_s == 1000.0
    assert stats.busy_ms_per_s == 0.0 and stats.window_ms == 2000.0


def test_rates_never_exceed_the_window():
    clock = ManualClock()
    meter = TaskTimeMeter(lambda: 0.0, clock)
    clock.advance(100)
    meter.add_idle(500)  # measured with another clock: more than the window
    stats = meter.sample()
    assert stats.idle_ms_per_s == 1000.0 and stats.busy_ms_per_s == 0.0
