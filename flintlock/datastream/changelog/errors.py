"""Errors of the changelog operators (``flintlock.datastream.changelog``).

Raised on the task thread while an operator runs (a changelog that cannot be applied) or on
the planner's thread while one is built (arguments that make no operator). Every constructor
argument is kept in ``args`` so the errors survive pickling on their way to the JobManager.
"""

from __future__ import annotations

from flintlock.common.errors import FlintlockError


class ChangelogError(FlintlockError):
    """Base of the errors of the changelog operators."""


class InvalidOperatorArgumentError(ChangelogError, ValueError):
    """An operator or aggregate function was built with arguments that make no sense (a rank
    range that starts below 1, a sort direction list of the wrong length...)."""

    def __init__(self, operator: str, problem: str) -> None:
        super().__init__(operator, problem)
        self.operator = operator
        self.problem = problem

    def __str__(self) -> str:
        return f"{self.operator}: {self.problem}"


class NotInsertOnlyError(ChangelogError, TypeError):
    """An operator that only accepts an insert-only input (append-only Top-N, deduplication)
    received an update or a delete: the planner chose the wrong operator for the input's
    changelog mode."""

    def __init__(self, operator: str, kind: str) -> None:
        super().__init__(operator, kind)
        self.operator = operator
        self.kind = kind

    def __str__(self) -> str:
        return (f"{self.operator} accepts only INSERT records but received {self.kind}; "
                "an updating input needs the retracting variant of this operator")


class UpsertInputError(ChangelogError, ValueError):
    """An operator over an upsert input without deletions (the updatable Top-N) received a
    retraction, or an update that moved a row's sort key the wrong way (Flink: "this break the
    monotonicity on sort key field"): the planner's monotonicity analysis did not hold."""

    def __init__(self, operator: str, problem: str) -> None:
        super().__init__(operator, problem)
        self.operator = operator
        self.problem = problem

    def __str__(self) -> str:
        return f"{self.operator}: {self.problem}"
