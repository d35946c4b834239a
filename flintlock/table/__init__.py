"""flintlock's Table API and SQL, laid out like PyFlink's ``pyflink.table``.

May import ``flintlock.common`` and ``flintlock.datastream``; nothing below it imports it
(DESIGN.md §8; tests/unit/test_layering.py). The lead of issue 28 owns this file; its exports
grow as the environment, the Table API and the planner land.
"""

from flintlock.common.types import Row, RowKind
from flintlock.table.types import DataTypes

__all__ = ["DataTypes", "Row", "RowKind"]
