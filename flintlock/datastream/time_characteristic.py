"""``TimeCharacteristic``: PyFlink's (deprecated) job-wide notion of time.

Flink ≥ 1.12 always uses event time where watermarks exist and processing time otherwise; the
setting is kept for source compatibility and has no effect.
"""

from __future__ import annotations

import enum


class TimeCharacteristic(enum.Enum):
    ProcessingTime = 0
    IngestionTime = 1
    EventTime = 2
