"""The watermark valve: minimum over open, active channels; idleness; finished channels."""

import pytest

from flintlock.runtime.network.event_time import MAX_WATERMARK, Watermark, WatermarkStatus
from flintlock.runtime.tasks.watermark_valve import (
    EmitWatermark,
    EmitWatermarkStatus,
    WatermarkValve,
    carry_out,
)


def test_the_minimum_over_channels_advances_only_when_the_slowest_channel_does():
    valve = WatermarkValve(2)
    assert valve.on_watermark(0, 10) == []
    assert valve.on_watermark(1, 5) == [EmitWatermark(5)]
    assert valve.on_watermark(1, 20) == [EmitWatermark(10)]
    assert valve.on_watermark(0, 15) == [EmitWatermark(15)]
    assert valve.watermark == 15


def test_a_channel_watermark_going_back_is_ignored():
    valve = WatermarkValve(1)
    assert valve.on_watermark(0, 10) == [EmitWatermark(10)]
    assert valve.on_watermark(0, 7) == []
    assert valve.on_watermark(0, 10) == []


def test_an_idle_channel_does_not_hold_the_watermark_back():
    valve = WatermarkValve(2)
    valve.on_watermark(0, 30)
    assert valve.on_status(1, idle=True) == [EmitWatermark(30)]
    assert not valve.idle


def test_all_channels_idle_makes_the_task_idle_and_one_active_channel_active_again():
    valve = WatermarkValve(2)
    assert valve.on_status(0, idle=True) == []
    assert valve.on_status(1, idle=True) == [EmitWatermarkStatus(True)]
    assert valve.idle
    assert valve.on_status(1, idle=False) == [EmitWatermarkStatus(False)]
    assert not valve.idle


def test_a_channel_back_from_idleness_behind_the_watermark_is_left_out_until_it_catches_up():
    valve = WatermarkValve(2)
    valve.on_status(1, idle=True)
    assert valve.on_watermark(0, 50) == [EmitWatermark(50)]
    assert valve.on_status(1, idle=False) == []  # at MIN, behind 50: not counted
    assert valve.on_watermark(0, 60) == [EmitWatermark(60)]
    assert valve.on_watermark(1, 55) == []  # still behind
    assert valve.on_watermark(1, 70) == []  # caught up: now it counts, min is 60
    assert valve.on_watermark(0, 80) == [EmitWatermark(70)]


def test_watermarks_of_an_idle_channel_are_ignored():
    valve = WatermarkValve(2)
    valve.on_status(0, idle=True)
    assert valve.on_watermark(0, 100) == []
    assert valve.on_watermark(1, 5) == [EmitWatermark(5)]


def test_a_finished_channel_no_longer_holds_the_watermark_back():
    valve = WatermarkValve(3)
    valve.on_watermark(0, 40)
    valve.on_watermark(2, 25)
    assert valve.on_finished(1) == [EmitWatermark(25)]
    assert valve.on_finished(2) == [EmitWatermark(40)]
    assert valve.on_finished(2) == []
    assert valve.on_watermark(2, 99) == []


def test_all_channels_finished_ends_event_time():
    valve = WatermarkValve(1)
    assert valve.on_finished(0) == [EmitWatermark(MAX_WATERMARK)]
    assert valve.on_finished(0) == []


def test_a_finished_channel_lets_event_time_advance_once_the_others_go_idle():
    valve = WatermarkValve(2)
    valve.on_watermark(0, MAX_WATERMARK)
    assert valve.on_finished(0) == []  # channel 1 is active and at MIN
    assert valve.on_status(1, idle=True) == [
        EmitWatermark(MAX_WATERMARK), EmitWatermarkStatus(True)]
    assert valve.watermark == MAX_WATERMARK


def test_a_valve_needs_a_channel():
    with pytest.raises(ValueError, match="at least one channel"):
        WatermarkValve(0)


def test_events_are_dispatched_by_kind():
    valve = WatermarkValve(1)
    assert valve.on_event(0, Watermark(7)) == [EmitWatermark(7)]
    assert valve.on_event(0, WatermarkStatus(True)) == [EmitWatermarkStatus(True)]


def test_carry_out_hands_actions_to_the_chain_in_order():
    seen = []

    class Chain:
        def process_watermark(self, timestamp):
            seen.append(("wm", timestamp))

        def process_watermark_status(self, idle):
            seen.append(("idle", idle))

    carry_out([EmitWatermarkStatus(False), EmitWatermark(3)], Chain())
    assert seen == [("idle", False), ("wm", 3)]
