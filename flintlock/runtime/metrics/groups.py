"""Metric groups: where a function registers its metrics, scoped as Flink scopes them.

The scope of a user metric is its operator subtask: ``RuntimeContext.get_metrics_group()``
returns the ``MetricGroup`` of one operator of one subtask. ``add_group(name)`` nests a
group; ``add_group(key, value)`` adds a key group and, under it, a value group, and returns
the value group, whose metrics carry the variable ``key=value`` (a Prometheus label) — as
Flink's and PyFlink's key/value groups do.

A group's ``MetricScope`` says everything a reporter needs, computed once when the group is
made: the REST identifier's components after the subtask index (operator name, then each
group's name, keys and values), the logical scope that names a Prometheus metric (``operator``
then group names and keys, not values) and the variables (Flink's ``<operator_name>`` etc.
plus the user's keys).

Every group of a subtask registers into that subtask's ``MetricRegistry`` (one per subtask,
made by the TaskManager). Registration happens on the task thread (usually in ``open``);
the heartbeat thread takes ``registered()``, a tuple copy of a list that is only appended to
(atomic under the GIL), so neither ever waits for the other.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from flintlock.common.errors import FlintlockError
from flintlock.runtime.metrics.metrics import Counter, Distribution, Meter, Metric, MetricKind

log = logging.getLogger(__name__)


class MetricNameClashError(FlintlockError):
    """A name registered twice in one group as two different kinds of metric."""

    def __init__(self, identifier: str, existing: str, wanted: str) -> None:
        super().__init__(identifier, existing, wanted)
        self.identifier = identifier
        self.existing = existing
        self.wanted = wanted

    def __str__(self) -> str:
        return (f"metric {self.identifier!r} is registered as a {self.existing} already; "
                f"it cannot also be a {self.wanted}")


@dataclass(frozen=True, slots=True)
class MetricScope:
    """Where a metric lives within its subtask (see the module doc); ``()`` components for a
    task-level (system) metric."""

    components: tuple[str, ...] = ()
    logical: tuple[str, ...] = ()
    variables: tuple[tuple[str, str], ...] = ()

    def identifier(self, name: str) -> str:
        """The metric's id within its subtask, Flink's REST form: ``Map.my_group.count``."""
        return ".".join((*self.components, name))


TASK_SCOPE = MetricScope()



class Gauge(Metric):
    """A value read from a callable when the metrics are reported (on the heartbeat thread,
    so the callable must be safe to call from another thread: reading an attribute is)."""

    __slots__ = ("_failed", "supplier")
    kind = MetricKind.GAUGE

    def __init__(self, supplier: Callable[[], Any]) -> None:
        self.supplier = supplier
        self._failed = False

    def get_value(self) -> float | None:
        """The supplier's number, or None (logged once) if it raised or returned none."""
        try:
            value = self.supplier()
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise TypeError(f"a gauge must return an int or float, got {value!r}")
        except Exception as error:  # user code on the reporter's thread: report, skip
            if not self._failed:
                self._failed = True
                log.warning("gauge %r cannot be read: %r", self.supplier, error)
            return None
        return value  # an int stays one (watermarks are beyond a float's exact integers)


@dataclass(frozen=True, slots=True)
class Registered:
    scope: MetricScope
    name: str
    metric: Metric


class MetricRegistry:
    """Every metric registered in one subtask, in registration order."""

    def __init__(self) -> None:
        self._metrics: list[Registered] = []  # task thread appends; any thread copies
        self._by_id: dict[str, Metric] = {}  # task thread only
        self._lock = threading.Lock()  # groups may be made from helper threads (async I/O)

    def register(self, scope: MetricScope, name: str, metric: Metric) -> Metric:
        """``metric``, or the metric of the same kind registered under that id before."""
        identifier = scope.identifier(name)
        with self._lock:
            existing = self._by_id.get(identifier)
            if existing is not None:
                if existing.kind is not metric.kind:
                    raise MetricNameClashError(identifier, existing.kind.value, metric.kind.value)
                return existing
            self._by_id[identifier] = metric
            self._metrics.append(Registered(scope, name, metric))
        return metric

    def registered(self) -> tuple[Registered, ...]:
        return tuple(self._metrics)


class MetricGroup:
    """A named container of metrics and further groups (PyFlink's ``MetricGroup``)."""

    def __init__(self, registry: MetricRegistry, scope: MetricScope,
                 task_variables: Mapping[str, str] | None = None) -> None:
        self._registry = registry
        self.scope = scope
        self._task_variables = dict(task_variables or {})
        self._children: dict[tuple[str, str | None], MetricGroup] = {}

    def add_group(self, name: str, extra: str | None = None) -> MetricGroup:
        """A nested group ``name``; with ``extra``, the value group ``extra`` under the key
        group ``name``, whose metrics carry the variable ``name=extra``."""
        key = (str(name), None if extra is None else str(extra))
        group = self._children.get(key)
        if group is None:
            group = self._children[key] = MetricGroup(
                self._registry, _child_scope(self.scope, *key), self._task_variables)
        return group

    def counter(self, name: str) -> Counter:
        return self._register(name, Counter())  # type: ignore[return-value]

    def gauge(self, name: str, obj: Callable[[], Any]) -> None:
        self._register(name, Gauge(obj))

    def meter(self, name: str, time_span_in_seconds: int = 60) -> Meter:
        return self._register(name, Meter(time_span_in_seconds))  # type: ignore[return-value]

    def distribution(self, name: str) -> Distribution:
        return self._register(name, Distribution())  # type: ignore[return-value]

    def get_scope_components(self) -> list[str]:
        return [*self._task_scope(), *self.scope.components]

    def get_all_variables(self) -> dict[str, str]:
        variables = {f"<{key}>": value for key, value in self._task_variables.items()}
        variables.update((f"<{key}>", value) for key, value in self.scope.variables)
        return variables

    def get_metric_identifier(self, metric_name: str) -> str:
        return ".".join((*self.get_scope_components(), metric_name))

    def _register(self, name: str, metric: Metric) -> Metric:
        if not isinstance(name, str) or not name:
            raise ValueError(f"a metric name must be a non-empty string, got {name!r}")
        return self._registry.register(self.scope, name, metric)

    def _task_scope(self) -> list[str]:
        """Flink's default operator scope before the operator: host, taskmanager, tm id, job."""
        v = self._task_variables
        parts = [v.get("host", ""), "taskmanager", v.get("tm_id", ""), v.get("job_name", "")]
        return [part for part in parts if part]


class SubtaskMetricGroups:
    """The operator groups of one subtask, all registering into its ``registry``;
    ``task_variables`` are Flink's task-level variables without brackets (``host``, ``tm_id``,
    ``job_id``, ``job_name``, ``task_name``, ``subtask_index``, ...)."""

    def __init__(self, registry: MetricRegistry | None = None,
                 task_variables: Mapping[str, str] | None = None) -> None:
        self.registry = registry if registry is not None else MetricRegistry()
        self.task_variables = dict(task_variables or {})
        self._operators: dict[str, MetricGroup] = {}
        self.task = MetricGroup(self.registry, TASK_SCOPE, self.task_variables)
        """Task-level metrics that task components register (Flink's task IO group)."""

    def operator(self, operator_id: str, operator_name: str) -> MetricGroup:
        """The group of one operator (the same object on every call)."""
        group = self._operators.get(operator_id)
        if group is None:
            group = self._operators[operator_id] = operator_group(
                self.registry, operator_id, operator_name, self.task_variables)
        return group


def operator_group(registry: MetricRegistry, operator_id: str, operator_name: str,
                   task_variables: Mapping[str, str] | None = None) -> MetricGroup:
    """The group of one operator of a subtask (see ``SubtaskMetricGroups``)."""
    scope = MetricScope(
        components=(operator_name,), logical=("operator",),
        variables=(("operator_id", operator_id), ("operator_name", operator_name)))
    return MetricGroup(registry, scope, task_variables)


def _child_scope(parent: MetricScope, name: str, value: str | None) -> MetricScope:
    if value is None:
        return MetricScope((*parent.components, name), (*parent.logical, name), parent.variables)
    return MetricScope((*parent.components, name, value), (*parent.logical, name),
                       (*parent.variables, (name, value)))
