"""flintlock's optional C accelerator (``_speedups.c``): loaded if it was built, else None.

Hot paths with a C version: the metrics ``Counter`` (its ``inc()`` costs less than a Python
attribute increment) and the typed codec's tuples (``pack_rows`` / ``unpack_rows`` for rows of
fixed-width fields, ``transpose`` for tuples with text or booleans). Each has a twin in Python
with the same behaviour, used where the accelerator was not built (no C compiler at install
time) or is switched off with ``FLINTLOCK_PURE_PYTHON=1`` in the environment (read once, at
import; set it for every process of a job, e.g. in the shell that runs the driver and in
``spark.executorEnv.FLINTLOCK_PURE_PYTHON`` on a cluster).

What is decided here is recorded in docs/decisions.md, "An optional C accelerator".
"""

from __future__ import annotations

import os
from types import ModuleType

PURE_PYTHON_ENV = "FLINTLOCK_PURE_PYTHON"


def _load() -> ModuleType | None:
    if os.environ.get(PURE_PYTHON_ENV, "").strip().lower() in ("1", "true", "yes"):
        return None
    try:
        from flintlock.common import _speedups
    except ImportError:
        return None
    return _speedups


accelerator: ModuleType | None = _load()
"""The compiled module, or None: the pure-Python twins are used."""
