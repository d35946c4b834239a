"""PyFlink's ``DeliveryGuarantee`` (``pyflink.datastream.connectors.base``): what a sink
promises about records after a failure. Defined here until ``connectors.base`` re-exports it.
"""

from __future__ import annotations

import enum


class DeliveryGuarantee(enum.Enum):
    EXACTLY_ONCE = 0  # no loss, no duplicates (two-phase commit on checkpoints)
    AT_LEAST_ONCE = 1  # no loss; records since the last checkpoint may be written again
    NONE = 2  # best effort
