"""PySpark's NumPy input converters for Py4J, made to look at NumPy only once NumPy is loaded.

PySpark registers Py4J input converters (``py4j.protocol.INPUT_CONVERTER``) that Py4J asks,
for every argument of every call into the JVM, whether they convert it. Two of them, for NumPy
scalars and 1-d arrays, answer by importing ``pyspark.testing.utils`` to read ``have_numpy``;
that module imports pandas, PyArrow, NumPy, ``unittest`` and PySpark's DataFrame API. So the
first Py4J call with an argument — ``SparkConf(_jvm=...)`` inside ``SparkContext.__init__``,
while the JVM waits for it — cost the driver about 1 CPU-second of imports (cProfile of the
embedded session's start, 2026-11-29; docs/benchmarks.md, issue 31) that flintlock never uses.

``guard_numpy_converters`` wraps those two converters (in place, keeping their order) in
``NumpyLoadedGuard``: an object that is a NumPy scalar or array can only exist once ``numpy``
is in ``sys.modules``, so while it is not, the answer is "no" without importing anything; once
it is, and the object is a NumPy value, the guard asks the wrapped converter, whose answer and
conversion are PySpark's own. For every argument the guard says exactly what the wrapped
converter would have said.

Called by ``session`` before flintlock's first Py4J call; idempotent; it mutates Py4J's
process-wide converter list, which PySpark filled when ``pyspark.sql.types`` was imported.
"""

from __future__ import annotations

import sys
from typing import Any

from py4j import protocol

_NUMPY_CONVERTERS = {"NumpyScalarConverter": "generic", "NumpyArrayConverter": "ndarray"}


class NumpyLoadedGuard:
    """A Py4J input converter that consults ``wrapped`` only for NumPy values."""

    def __init__(self, wrapped: Any, numpy_type: str) -> None:
        self.wrapped = wrapped
        self._numpy_type = numpy_type  # the attribute of the numpy module to test against

    def can_convert(self, obj: Any) -> bool:
        numpy = sys.modules.get("numpy")
        kind = getattr(numpy, self._numpy_type, None) if numpy is not None else None
        if kind is None or not isinstance(obj, kind):
            return False
        return bool(self.wrapped.can_convert(obj))

    def convert(self, obj: Any, gateway_client: Any) -> Any:
        return self.wrapped.convert(obj, gateway_client)


def guard_numpy_converters(converters: list[Any] | None = None) -> int:
    """Wrap PySpark's NumPy converters in ``converters`` (Py4J's list by default); returns how
    many were wrapped now (0 when already guarded, or when this PySpark has none)."""
    target = protocol.INPUT_CONVERTER if converters is None else converters
    wrapped = 0
    for index, converter in enumerate(target):
        numpy_type = _NUMPY_CONVERTERS.get(type(converter).__name__)
        if numpy_type is not None:
            target[index] = NumpyLoadedGuard(converter, numpy_type)
            wrapped += 1
    return wrapped
