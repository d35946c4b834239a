"""PyFlink's ``ExplainDetail``: extra details ``explain()`` may show."""

import enum

__all__ = ["ExplainDetail"]


class ExplainDetail(enum.Enum):
    ESTIMATED_COST = 0
    CHANGELOG_MODE = 1
    JSON_EXECUTION_PLAN = 2
    PLAN_ADVICE = 3
