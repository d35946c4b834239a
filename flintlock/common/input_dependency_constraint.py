"""PyFlink's ``pyflink.common.input_dependency_constraint`` (deprecated in Flink): when a task
with several inputs may be scheduled. flintlock schedules every task of a job at once, so the
value is accepted and has no effect."""

import enum


class InputDependencyConstraint(enum.Enum):
    ANY = 0  # schedule once any input is consumable
    ALL = 1  # schedule once all inputs are consumable


__all__ = ["InputDependencyConstraint"]
