"""PyFlink's ``pyflink.datastream.window``: windows, window assigners and triggers.

The classes are defined in ``flintlock.common.windowing`` (the runtime calls them too and never
imports the user API); this module gives them their PyFlink import path. PyFlink names that
flintlock does not implement raise ``NotImplementedError`` naming the feature when imported.
Names only: this module holds no state.
"""

from typing import NoReturn

from flintlock.common.windowing import (
    ContinuousEventTimeTrigger,
    ContinuousProcessingTimeTrigger,
    CountSlidingWindowAssigner,
    CountTrigger,
    CountTumblingWindowAssigner,
    CountWindow,
    CountWindowSerializer,
    DynamicEventTimeSessionWindows,
    DynamicProcessingTimeSessionWindows,
    EventTimeSessionWindows,
    EventTimeTrigger,
    GlobalWindow,
    GlobalWindows,
    GlobalWindowSerializer,
    MergingWindowAssigner,
    NeverTrigger,
    ProcessingTimeSessionWindows,
    ProcessingTimeTrigger,
    PurgingTrigger,
    SessionWindowTimeGapExtractor,
    SlidingEventTimeWindows,
    SlidingProcessingTimeWindows,
    TimeWindow,
    TimeWindowSerializer,
    Trigger,
    TriggerResult,
    TumblingEventTimeWindows,
    TumblingProcessingTimeWindows,
    Window,
    WindowAssigner,
)

_UNSUPPORTED: dict[str, str] = {}


def __getattr__(name: str) -> NoReturn:
    if name in _UNSUPPORTED:
        raise NotImplementedError(f"flintlock.datastream.window.{name}: {_UNSUPPORTED[name]} "
                                  "is not supported yet (issue #5)")
    raise AttributeError(f"module 'flintlock.datastream.window' has no attribute {name!r}")


__all__ = [
    "ContinuousEventTimeTrigger",
    "ContinuousProcessingTimeTrigger",
    "CountSlidingWindowAssigner",
    "CountTrigger",
    "CountTumblingWindowAssigner",
    "CountWindow",
    "CountWindowSerializer",
    "DynamicEventTimeSessionWindows",
    "DynamicProcessingTimeSessionWindows",
    "EventTimeSessionWindows",
    "EventTimeTrigger",
    "GlobalWindow",
    "GlobalWindowSerializer",
    "GlobalWindows",
    "MergingWindowAssigner",
    "NeverTrigger",
    "ProcessingTimeSessionWindows",
    "ProcessingTimeTrigger",
    "PurgingTrigger",
    "SessionWindowTimeGapExtractor",
    "SlidingEventTimeWindows",
    "SlidingProcessingTimeWindows",
    "TimeWindow",
    "TimeWindowSerializer",
    "Trigger",
    "TriggerResult",
    "TumblingEventTimeWindows",
    "TumblingProcessingTimeWindows",
    "Window",
    "WindowAssigner",
]
