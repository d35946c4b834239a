"""Which clock fired a timer (PyFlink's ``TimeDomain``, exported by
``flintlock.datastream``): shared by the user API and the runtime that fires the timers."""

from __future__ import annotations

import enum


class TimeDomain(enum.Enum):
    """Which clock fired a timer."""

    EVENT_TIME = 0
    PROCESSING_TIME = 1
