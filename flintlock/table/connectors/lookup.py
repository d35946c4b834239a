"""The table function of a lookup join (``JOIN dim FOR SYSTEM_TIME AS OF t.proc_time ON t.k =
dim.k``): for each probe row, the rows of ``dim`` whose key columns equal the probe's values,
asked of the connector at that moment (processing time), as Flink's ``LookupJoin`` does.

The binder plans a lookup join as a ``Correlate`` of the probe side with a
``LookupTableFunction(spec, keys)``: ``spec`` is the dimension table, ``keys`` its columns the
ON clause equates with probe expressions (the Correlate's operands, in the same order). The
function is a value pickled into the job; ``open`` asks the table's connector factory for its
lookup function (``factory.lookup_function(spec, keys)``: ``jdbc`` has one, with its cache and
retries) on the join's task thread, ``eval_rows(*key)`` returns the matching rows' values,
``close`` releases the connection. ``check(spec, keys)`` runs on the driver when the query is
planned: a connector without a lookup side is refused there.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from flintlock.table.connectors import registry
from flintlock.table.errors import UnsupportedFeatureError
from flintlock.table.plan.nodes import TableSpec


def _lookup_factory(spec: TableSpec) -> Any:
    found = registry.validate(spec)
    if not callable(getattr(found, "lookup_function", None)):
        raise UnsupportedFeatureError(
            f"a lookup join against the '{spec.options.get('connector')}' table {spec.name}",
            "a processing-time lookup join needs a connector with a lookup side (jdbc)")
    return found


def check(spec: TableSpec, keys: Sequence[str]) -> None:
    """Refuses, on the driver, a table or keys the connector cannot look up."""
    _lookup_factory(spec).lookup_function(spec, tuple(keys)).close()


class LookupTableFunction:
    """The rows of ``spec`` whose ``keys`` equal a probe row's key values."""

    def __init__(self, spec: TableSpec, keys: Sequence[str]) -> None:
        self.spec = spec
        self.keys = tuple(keys)
        self._function: Any = None  # the connector's lookup function; task thread

    def open(self, runtime_context: Any = None) -> None:
        self._function = _lookup_factory(self.spec).lookup_function(self.spec, self.keys)

    def eval_rows(self, *key: Any) -> list[list[Any]]:
        if self._function is None:
            self.open()
        rows: list[list[Any]] = self._function.lookup(key)
        return rows

    def close(self) -> None:
        if self._function is not None:
            self._function.close()
            self._function = None

    def __getstate__(self) -> dict[str, Any]:
        return {"spec": self.spec, "keys": self.keys, "_function": None}


__all__ = ["LookupTableFunction", "check"]
