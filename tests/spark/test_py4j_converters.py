"""PySpark's NumPy Py4J converters behind ``NumpyLoadedGuard``, without a Spark session."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
from pyspark.sql.types import NumpyArrayConverter, NumpyScalarConverter

from flintlock.spark.py4j_converters import NumpyLoadedGuard, guard_numpy_converters

_ASK_EVERY_CONVERTER = """
import sys
from py4j import protocol
import pyspark.sql.types  # registers PySpark's converters, as importing pyspark does
{guard}
for value in (1, "text", 2.5, b"bytes", [1, 2], {{"a": 1}}, None):
    for converter in protocol.INPUT_CONVERTER:
        converter.can_convert(value)
print(sorted(m for m in ("pandas", "pyarrow", "numpy", "pyspark.testing.utils")
             if m in sys.modules))
"""


def _modules_loaded_by_asking(guard: str) -> str:
    done = subprocess.run([sys.executable, "-c", _ASK_EVERY_CONVERTER.format(guard=guard)],
                          capture_output=True, text=True, check=True, timeout=120)
    return done.stdout.strip()


def test_asking_the_guarded_converters_about_plain_values_imports_nothing() -> None:
    # A fresh interpreter: what this process imported before must not decide the outcome.
    guard = ("from flintlock.spark.py4j_converters import guard_numpy_converters\n"
             "assert guard_numpy_converters() == 2")
    unguarded = _modules_loaded_by_asking("")
    assert "pandas" in unguarded or "pyspark.testing.utils" in unguarded  # the cost guarded
    assert _modules_loaded_by_asking(guard) == "[]"


def test_the_guard_answers_as_the_wrapped_converter_for_every_value() -> None:
    values = [np.int64(3), np.float32(1.5), np.bool_(True), np.array([1, 2]),
              np.array([[1, 2]]), np.array(["a"]), 3, 1.5, "a", [1, 2], (1,), None]
    for converter, numpy_type in ((NumpyScalarConverter(), "generic"),
                                  (NumpyArrayConverter(), "ndarray")):
        guard = NumpyLoadedGuard(converter, numpy_type)
        assert [guard.can_convert(v) for v in values] == [converter.can_convert(v)
                                                          for v in values]


def test_guarding_wraps_in_place_once_and_keeps_other_converters() -> None:
    other = object()
    converters: list[object] = [NumpyArrayConverter(), other, NumpyScalarConverter()]
    assert guard_numpy_converters(converters) == 2
    assert guard_numpy_converters(converters) == 0
    assert converters[1] is other
    assert [type(c.wrapped).__name__ for c in (converters[0], converters[2])  # type: ignore[attr-defined]
            ] == ["NumpyArrayConverter", "NumpyScalarConverter"]


def test_the_guard_converts_through_the_wrapped_converter() -> None:
    class Recording:
        def can_convert(self, obj: object) -> bool:
            return True

        def convert(self, obj: object, gateway_client: object) -> object:
            return ("converted", obj, gateway_client)

    guard = NumpyLoadedGuard(Recording(), "generic")
    value = np.int32(7)
    assert guard.can_convert(value) and not guard.can_convert(7)
    assert guard.convert(value, "client") == ("converted", value, "client")
